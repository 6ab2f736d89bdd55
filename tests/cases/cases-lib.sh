# Helpers for the tests in tests/cases; source after lib.sh.

# keep VAR CMD [ARGS...]: run CMD in this shell and set VAR to the one
# line it prints.  lib.sh's new_image and tmpdir record what to remove
# at exit in shell arrays; called as $(new_image ...) they would run in
# a subshell, the record would be lost and the image or directory
# would stay behind.  The output goes through a pipe opened read-write
# on itself, so no file is left even if CMD fails (set -e exits).
keep() {
  local _keep_fd
  exec {_keep_fd}<> <(:)
  "${@:2}" >&"$_keep_fd"
  IFS= read -r -t 10 -u "$_keep_fd" "$1"
  exec {_keep_fd}>&-
}

# import_into IMAGE FILE: make IMAGE (made by new_image, so removed at
# exit) hold exactly FILE's bytes, written by `rbd import` (the image is
# re-created with the size of FILE and the default features, or those
# given after FILE).
import_into() {
  local img=$1 file=$2
  shift 2
  rbd rm --no-progress "$img" >/dev/null
  rbd import --no-progress "$@" "$file" "$img" >/dev/null
}
