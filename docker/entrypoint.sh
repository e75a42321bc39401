#!/bin/sh
# Entrypoint of the xxl-admin-go image, a drop-in for xuxueli/xxl-job-admin:
#
#   PARAMS     Spring-style "--key=value ..." options, as the official image takes them.
#              The admin reads PARAMS itself and splits it at white space, as the
#              official image's unquoted $PARAMS is split, so it is passed on untouched.
#   JAVA_OPTS  accepted so existing run commands keep working; there is no JVM to tune.
#
# Arguments (docker run IMAGE schema init, --key=value, ...) go to the admin and win
# over PARAMS.
set -eu

if [ -n "${JAVA_OPTS:-}" ]; then
	echo "xxl-admin-go: JAVA_OPTS is ignored (there is no JVM)" >&2
fi

# XXL_ADMIN_BIN (tests only) names another binary; the admin would read it as a property.
bin=${XXL_ADMIN_BIN:-/usr/local/bin/xxl-admin-go}
unset XXL_ADMIN_BIN
exec "$bin" "$@"
