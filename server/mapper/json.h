/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/json.h: the one JSON writer of the mapper.
 *
 * Every command that prints JSON (map, attach, list-mapped, status, map
 * --connection-info) builds a json-c object with these helpers and prints
 * it with rbdx_json_print; JSON is parsed with json-c too (conninfo.c).
 * Output is compact, one document per line, '/' not escaped, members in
 * the order they were added.  Allocation failures print "rbdx: out of
 * memory" and exit(1), as everywhere in the command line.  Not
 * thread-safe (stdio).
 */
#ifndef RBDX_SERVER_JSON_H
#define RBDX_SERVER_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/** A new empty object, or array (owned by the caller, or by the object
 *  or array it is added to). */
json_object *rbdx_json_object (void);
json_object *rbdx_json_array (void);

/** Add @p key to object @p o: a string (NULL: null), an unsigned number,
 *  a signed number, a boolean, a process id (<= 0: null, "none"), a number printed with
 *  @p decimals digits after the point, or @p v itself (ownership passes
 *  to @p o; NULL: null). */
void rbdx_json_add_string (json_object *o, const char *key, const char *v);
void rbdx_json_add_uint (json_object *o, const char *key, uint64_t v);
void rbdx_json_add_int (json_object *o, const char *key, int64_t v);
void rbdx_json_add_bool (json_object *o, const char *key, bool v);
void rbdx_json_add_pid (json_object *o, const char *key, long pid);
void rbdx_json_add_fixed (json_object *o, const char *key, double v, int decimals);
void rbdx_json_add (json_object *o, const char *key, json_object *v);

/** Append @p v to array @p a (ownership passes to @p a). */
void rbdx_json_append (json_object *a, json_object *v);

/** Print @p v and a newline to @p f, then release @p v. */
void rbdx_json_print (FILE *f, json_object *v);

#endif
