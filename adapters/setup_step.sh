# beyondswe: runs one setup command of a record (a `pre_commands` entry) so that what it exports
# carries over to the next command and to the tests, as in one shell session: a `export X=1` or
# a sourced `activate` script is part of the image's environment, which the prepare step records.
#
#   sh setup_step.sh ENV_FILE COMMAND
#
# ENV_FILE holds the exports so far, as `export -p` writes them. It is read before the command
# and written back when the shell exits, whatever the command's exit status, which is kept.
# Used by the offline grader's prepare step and by the Harbor environment's Dockerfile alike.
__bsw_env=$1
__bsw_cmd=$2
set --
if [ -f "$__bsw_env" ]; then . "$__bsw_env"; fi
trap '__bsw_rc=$?; export -p >"$__bsw_env.tmp" && mv -f "$__bsw_env.tmp" "$__bsw_env"; exit $__bsw_rc' EXIT
eval "$__bsw_cmd"
