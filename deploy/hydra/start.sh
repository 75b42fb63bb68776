#!/bin/sh
# The demonstration identity provider's start (deploy/Dockerfile.hydra): Hydra on its in-memory database, then the
# OAuth clients of /etc/agentura/clients.json imported through the admin API, their audiences CLIENT_AUDIENCES. Everything is made anew at each start
# (clients, signing keys): the agents read the new keys on the first token that names one.
set -eu
hydra serve all --sqa-opt-out &
pid=$!
trap 'kill -TERM "$pid"' TERM INT
i=0
until httpprobe https://127.0.0.1:4445/health/ready >/dev/null 2>&1; do
	i=$((i + 1))
	if [ "$i" -gt 240 ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "start: hydra did not become ready" >&2
		exit 1
	fi
	sleep 0.5
done
# The clients may ask for tokens whose audience is one of the agents: CLIENT_AUDIENCES, comma-separated base URLs.
audiences=$(printf '%s' "${CLIENT_AUDIENCES:?set CLIENT_AUDIENCES to the agents' public base URLs}" | sed 's/[^,][^,]*/"&"/g')
sed "s#__AUDIENCES__#[$audiences]#" /etc/agentura/clients.json >/tmp/clients.json
hydra import oauth2-client -e https://127.0.0.1:4445 /tmp/clients.json >/dev/null
echo "start: OAuth clients imported"
touch /tmp/clients-imported
wait "$pid"
