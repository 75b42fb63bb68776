#!/usr/bin/env bash
# bench/nginx.sh AGENT_BINARY — the agent's /files/ beside nginx (sendfile on)
# serving the same bytes on loopback, in one run, and the agent's peak RSS
# over a 1 GiB round trip (tus upload, then download through /files/).
# `make bench-nginx` builds the agent (internal/cmd/benchagent) and runs it.
# Needs nginx (Debian nginx-light), wrk and curl: .ci/apt.d/bench.txt.
# Everything listens on 127.0.0.1 only and is stopped at the end.
set -euo pipefail

agent=${1:?usage: bench/nginx.sh AGENT_BINARY}
for tool in nginx wrk curl; do
	command -v "$tool" >/dev/null || { echo "bench-nginx needs $tool: apt-get install nginx-light wrk curl" >&2; exit 2; }
done
DURATION=${DURATION:-5s}     # each wrk run
RPS_ROUNDS=${RPS_ROUNDS:-5}  # wrk runs per server, alternating (the median is reported)
CONNS=${CONNS:-64}           # wrk connections
ROUNDS=${ROUNDS:-7}          # curl downloads of the big file per server
BIG_MIB=${BIG_MIB:-256}      # size of the big file
RSS_MIB=${RSS_MIB:-1024}     # size of the round-trip file (0 skips it)

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
nginx_port=$(freeport)
agent_port=$(freeport)
gofs_port=$(freeport)
plain_port=$(freeport)

chmod 755 "$tmp"
mkdir -p "$tmp/www" "$tmp/nginx" "$tmp/agent" "$tmp/plain"
head -c 4096 /dev/urandom >"$tmp/www/4k.bin"
head -c $((BIG_MIB << 20)) /dev/urandom >"$tmp/www/big.bin"

cat >"$tmp/nginx/nginx.conf" <<EOF
worker_processes auto;
daemon off;
pid $tmp/nginx/nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
	sendfile on;
	tcp_nopush on;
	access_log off;
	keepalive_requests 1000000;
	client_body_temp_path $tmp/nginx;
	types { application/octet-stream bin; }
	server {
		listen 127.0.0.1:$nginx_port;
		root $tmp/www;
	}
}
EOF
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e stderr &
pids+=($!)

# No owner quota: the bench stores up to 1.3 GiB, over the default of 1 GiB.
AGENT_SIGNING_KEY=$(head -c 32 /dev/urandom | base64) AGENT_ADDR=127.0.0.1:$agent_port AGENT_PUBLIC_URL=http://127.0.0.1:$agent_port AGENT_DATA_DIR=$tmp/agent \
	AGENT_MAX_UPLOAD_BYTES=$((((RSS_MIB > BIG_MIB ? RSS_MIB : BIG_MIB) + 1) << 20)) AGENT_OWNER_QUOTA_BYTES=0 AGENT_LOG_LEVEL=warn \
	"$agent" &
agent_pid=$!
pids+=($agent_pid)

"$agent" fileserver "127.0.0.1:$gofs_port" "$tmp/www" &
pids+=($!)

# The same agent with its quick download path off: every request through net/http.
AGENT_SIGNING_KEY=$(head -c 32 /dev/urandom | base64) AGENT_ADDR=127.0.0.1:$plain_port \
	AGENT_PUBLIC_URL=http://127.0.0.1:$plain_port AGENT_DATA_DIR=$tmp/plain AGENT_LOG_LEVEL=warn "$agent" &
pids+=($!)

for url in "http://127.0.0.1:$nginx_port/4k.bin" "http://127.0.0.1:$agent_port/healthz" "http://127.0.0.1:$gofs_port/4k.bin" \
	"http://127.0.0.1:$plain_port/healthz"; do
	for _ in $(seq 100); do curl -fso /dev/null "$url" && break; sleep 0.1; done
done

# stage PATH NAME [PORT]: POST /uploads, print the signed URL.
stage() {
	curl -fsS -H "X-Filename: $2" --data-binary "@$1" "http://127.0.0.1:${3:-$agent_port}/uploads" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])'
}
small_url=$(stage "$tmp/www/4k.bin" 4k.bin)
big_url=$(stage "$tmp/www/big.bin" big.bin)
plain_small_url=$(stage "$tmp/www/4k.bin" 4k.bin "$plain_port")

rps() { wrk -t2 -c"$CONNS" -d"$DURATION" "$1" | awk '/Requests\/sec/ {print $2}'; }
# median MB/s of ROUNDS curl downloads (alternating servers is done by the caller)
speed() { curl -fso /dev/null -w '%{speed_download}' "$1" | awk '{printf "%.0f", $1/1e6}'; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)   ($(nproc) CPUs)"
curl -fso /dev/null "$small_url"
n_all=() a_all=() p_all=() g_all=()
for _ in $(seq "$RPS_ROUNDS"); do
	n_all+=("$(rps "http://127.0.0.1:$nginx_port/4k.bin")")
	a_all+=("$(rps "$small_url")")
	p_all+=("$(rps "$plain_small_url")")
	g_all+=("$(rps "http://127.0.0.1:$gofs_port/4k.bin")")
done
n_rps=$(median "${n_all[@]}")
a_rps=$(median "${a_all[@]}")
p_rps=$(median "${p_all[@]}")
g_rps=$(median "${g_all[@]}")
n_mb=() a_mb=() g_mb=()
for _ in $(seq "$ROUNDS"); do
	n_mb+=("$(speed "http://127.0.0.1:$nginx_port/big.bin")")
	a_mb+=("$(speed "$big_url")")
	g_mb+=("$(speed "http://127.0.0.1:$gofs_port/big.bin")")
done
n_med=$(median "${n_mb[@]}")
a_med=$(median "${a_mb[@]}")
g_med=$(median "${g_mb[@]}")
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo
ratio() { awk -v a="$1" -v n="$2" 'BEGIN {printf "%.2f", a/n}'; }
printf '%-48s %10s %10s %8s %8s %15s %8s %14s %8s\n' "download" "nginx" "agent" "ratio" "target" "agent net/http" "ratio" "Go FileServer" "ratio"
printf '%-48s %10s %10s %8s %8s %15s %8s %14s %8s\n' "4 KiB, $CONNS conns, wrk $DURATION, median of $RPS_ROUNDS (req/s)" \
	"$n_rps" "$a_rps" "$(ratio "$a_rps" "$n_rps")" "0.70" "$p_rps" "$(ratio "$p_rps" "$n_rps")" "$g_rps" "$(ratio "$g_rps" "$n_rps")"
printf '%-48s %10s %10s %8s %8s %15s %8s %14s %8s\n' "$BIG_MIB MiB, curl median of $ROUNDS (MB/s)" \
	"$n_med" "$a_med" "$(ratio "$a_med" "$n_med")" "0.95" "" "" "$g_med" "$(ratio "$g_med" "$n_med")"
echo "  (agent net/http: the same agent with AGENT_NET_HTTP_DOWNLOADS=true, its quick download path off)"
echo "  (req/s runs: nginx ${n_all[*]}; agent ${a_all[*]}; agent net/http ${p_all[*]}; Go FileServer ${g_all[*]})"
echo "  (MB/s runs: nginx ${n_mb[*]}; agent ${a_mb[*]}; Go FileServer ${g_mb[*]})"

[ "$RSS_MIB" -gt 0 ] || exit 0
# The round trip: a tus upload of RSS_MIB MiB in one PATCH, then a download of it.
rm -f "$tmp/www/big.bin"
head -c $((RSS_MIB << 20)) /dev/urandom >"$tmp/round.bin"
loc=$(curl -fsS -D - -o /dev/null -X POST -H 'Tus-Resumable: 1.0.0' -H "Upload-Length: $((RSS_MIB << 20))" \
	-H "Upload-Metadata: filename $(printf round.bin | base64)" "http://127.0.0.1:$agent_port/uploads/tus/" |
	tr -d '\r' | awk -F': ' 'tolower($1)=="location" {print $2}')
file_url=$(curl -fsS -D - -o /dev/null -X PATCH -H 'Tus-Resumable: 1.0.0' -H 'Upload-Offset: 0' \
	-H 'Content-Type: application/offset+octet-stream' -T "$tmp/round.bin" "$loc" |
	tr -d '\r' | awk -F': ' 'tolower($1)=="file-url" {print $2}')
[ -n "$file_url" ] || { echo "the tus upload answered no File-Url" >&2; exit 1; }
got=$(curl -fsS "$file_url" | sha256sum | cut -d' ' -f1)
want=$(sha256sum <"$tmp/round.bin" | cut -d' ' -f1)
[ "$got" = "$want" ] || { echo "the round trip changed the bytes" >&2; exit 1; }
hwm=$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$agent_pid/status")
echo
echo "$RSS_MIB MiB round trip (tus upload, download through /files/): agent peak RSS (VmHWM) ${hwm} MiB, target < 64 MiB"
[ "$hwm" -lt 64 ] || { echo "peak RSS over 64 MiB" >&2; exit 1; }
