#!/bin/sh
# HEALTHCHECK of the xxl-admin-go image: GET <context-path>/actuator/health on the port
# the admin listens on, both found the way the admin finds them: defaults (8080,
# /xxl-job-admin) < SERVER_PORT, SERVER_SERVLET_CONTEXTPATH < PARAMS. HEALTHCHECK_URL
# overrides all of it (needed when the port is set by arguments rather than PARAMS).
set -eu

url=${HEALTHCHECK_URL:-}
if [ -z "$url" ]; then
	port=${SERVER_PORT:-8080}
	ctx=${SERVER_SERVLET_CONTEXTPATH-${SERVER_SERVLET_CONTEXT_PATH-/xxl-job-admin}}
	set -f
	for word in ${PARAMS:-}; do
		case $word in
		--server.port=*) port=${word#*=} ;;
		--server.servlet.context-path=* | --server.servlet.contextPath=* | --server.servlet.contextpath=*) ctx=${word#*=} ;;
		esac
	done
	set +f
	ctx=${ctx%/}
	case $ctx in
	"" | /*) ;;
	*) ctx=/$ctx ;;
	esac
	url="http://127.0.0.1:${port}${ctx}/actuator/health"
fi

exec wget -q -T 5 -O /dev/null "$url"
