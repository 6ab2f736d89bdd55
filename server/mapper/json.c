/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/json.c: the mapper's one JSON writer, over json-c (see
 * json.h). */
#include <stdlib.h>

#include "json.h"

static void __attribute__ ((noreturn))
oom (void)
{
  fprintf (stderr, "rbdx: out of memory\n");
  exit (1);
}

static json_object *
checked (json_object *v)
{
  if (!v)
    oom ();
  return v;
}

json_object *
rbdx_json_object (void)
{
  return checked (json_object_new_object ());
}

json_object *
rbdx_json_array (void)
{
  return checked (json_object_new_array ());
}

void
rbdx_json_add (json_object *o, const char *key, json_object *v)
{
  /* json-c: NULL is a valid member value, printed as null. */
  if (json_object_object_add (o, key, v) < 0)
    oom ();
}

void
rbdx_json_add_string (json_object *o, const char *key, const char *v)
{
  rbdx_json_add (o, key, v ? checked (json_object_new_string (v)) : NULL);
}

void
rbdx_json_add_uint (json_object *o, const char *key, uint64_t v)
{
  rbdx_json_add (o, key, checked (json_object_new_uint64 (v)));
}

void
rbdx_json_add_int (json_object *o, const char *key, int64_t v)
{
  rbdx_json_add (o, key, checked (json_object_new_int64 (v)));
}

void
rbdx_json_add_bool (json_object *o, const char *key, bool v)
{
  rbdx_json_add (o, key, checked (json_object_new_boolean (v)));
}

void
rbdx_json_add_pid (json_object *o, const char *key, long pid)
{
  rbdx_json_add (o, key, pid > 0 ? checked (json_object_new_int64 (pid)) : NULL);
}

void
rbdx_json_add_fixed (json_object *o, const char *key, double v, int decimals)
{
  char text[64];

  snprintf (text, sizeof text, "%.*f", decimals, v);
  /* json-c prints the given text for the number (json_object_new_double_s). */
  rbdx_json_add (o, key, checked (json_object_new_double_s (v, text)));
}

void
rbdx_json_append (json_object *a, json_object *v)
{
  if (json_object_array_add (a, v) < 0)
    oom ();
}

void
rbdx_json_print (FILE *f, json_object *v)
{
  const char *text = json_object_to_json_string_ext (v, JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE);
  if (!text)
    oom ();
  fprintf (f, "%s\n", text);
  json_object_put (v);
}
