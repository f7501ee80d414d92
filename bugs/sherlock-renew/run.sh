#!/bin/sh
# run.sh LIBDIR: start client.py on the sherlock package in LIBDIR with the
# first python3 (LOCKTORTURE_PYTHON first, then along PATH) that can import
# redis, as locktorture's own Python locks do.
here=$(dirname "$0")
IFS=":
"
for py in ${LOCKTORTURE_PYTHON:-} $(for d in $PATH; do [ -x "$d/python3" ] && echo "$d/python3"; done); do
	if "$py" -c 'import redis' 2>/dev/null; then
		exec "$py" "$here/client.py" "$1"
	fi
done
echo "sherlock-renew: no python3 that can import redis (Debian: apt-get install python3-redis)" >&2
exit 1
