#!/bin/sh
# python.sh CLIENT LIBDIR: start the bug's client process (CLIENT, a
# Python script of the line protocol) on the library kept in LIBDIR, with
# the first python3 (LOCKTORTURE_PYTHON first, then along PATH) that can
# import redis, as locktorture's own Python locks choose theirs.
IFS=":
"
for py in ${LOCKTORTURE_PYTHON:-} $(for d in $PATH; do [ -x "$d/python3" ] && echo "$d/python3"; done); do
	if "$py" -c 'import redis' 2>/dev/null; then
		exec "$py" "$1" "$2"
	fi
done
echo "$(basename "$(dirname "$1")"): no python3 that can import redis (Debian: apt-get install python3-redis)" >&2
exit 1
