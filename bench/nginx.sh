#!/usr/bin/env bash
# bench/nginx.sh AGENT_BINARY — the agent's /files/ beside nginx (sendfile on)
# serving the same bytes on loopback, in one run: the agent alone, and nginx
# in front of an agent that answers verified downloads with X-Accel-Redirect
# (deploy/nginx/agent-files.conf, AGENT_ACCEL_REDIRECT), each against nginx
# alone; then the agent's peak RSS over a 1 GiB round trip (tus upload, then
# download through /files/).
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
accel_port=$(freeport) # the agent behind nginx
front_port=$(freeport) # nginx in front of it

chmod 755 "$tmp"
mkdir -p "$tmp/www" "$tmp/nginx" "$tmp/agent" "$tmp/accel"
head -c 4096 /dev/urandom >"$tmp/www/4k.bin"
head -c $((BIG_MIB << 20)) /dev/urandom >"$tmp/www/big.bin"

# The deployment's server block, pointed at this run's agent, port and data folder.
here=$(cd "$(dirname "$0")" && pwd)
sed -e "s|server composer-agent:8002;|server 127.0.0.1:$accel_port;|" -e "s|listen 8080;|listen 127.0.0.1:$front_port;|" \
	-e "s|alias /data/;|alias $tmp/accel/;|" "$here/../deploy/nginx/agent-files.conf" >"$tmp/nginx/agent-files.conf"
grep -q "alias $tmp/accel/;" "$tmp/nginx/agent-files.conf" || { echo "deploy/nginx/agent-files.conf changed its shape" >&2; exit 1; }

cat >"$tmp/nginx/nginx.conf" <<EOF
user $(id -un);
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
	include $tmp/nginx/agent-files.conf;
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

# An agent behind nginx: its URLs name nginx, whose internal location sends the files (X-Accel-Redirect).
AGENT_ACCEL_REDIRECT=/internal-files/ AGENT_TRUSTED_PROXIES=127.0.0.1 AGENT_SIGNING_KEY=$(head -c 32 /dev/urandom | base64) AGENT_ADDR=127.0.0.1:$accel_port \
	AGENT_PUBLIC_URL=http://127.0.0.1:$front_port AGENT_DATA_DIR=$tmp/accel AGENT_OWNER_QUOTA_BYTES=0 AGENT_LOG_LEVEL=warn \
	AGENT_MAX_UPLOAD_BYTES=$(((BIG_MIB + 1) << 20)) "$agent" &
pids+=($!)

for url in "http://127.0.0.1:$nginx_port/4k.bin" "http://127.0.0.1:$agent_port/healthz" "http://127.0.0.1:$gofs_port/4k.bin" \
	"http://127.0.0.1:$accel_port/healthz" "http://127.0.0.1:$front_port/healthz"; do
	for _ in $(seq 100); do curl -fso /dev/null "$url" && break; sleep 0.1; done
done

# stage PATH NAME [PORT]: POST /uploads, print the signed URL.
stage() {
	curl -fsS -H "X-Filename: $2" --data-binary "@$1" "http://127.0.0.1:${3:-$agent_port}/uploads" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])'
}
small_url=$(stage "$tmp/www/4k.bin" 4k.bin)
big_url=$(stage "$tmp/www/big.bin" big.bin)
accel_small_url=$(stage "$tmp/www/4k.bin" 4k.bin "$accel_port")
accel_big_url=$(stage "$tmp/www/big.bin" big.bin "$accel_port")
# Through nginx: the bytes, and the headers the agent sets, must come out as from the agent itself.
hdrs=$(curl -fsS -D - -o "$tmp/check.bin" "$accel_small_url" | tr -d '\r')
cmp -s "$tmp/check.bin" "$tmp/www/4k.bin" || { echo "the download through nginx is not the file" >&2; exit 1; }
for h in 'content-disposition: attachment' 'x-content-type-options: nosniff' 'content-security-policy: ' 'etag: "'; do
	grep -qi "^$h" <<<"$hdrs" || { echo "the download through nginx lacks $h:" >&2; echo "$hdrs" >&2; exit 1; }
done
grep -qi '^x-accel-redirect' <<<"$hdrs" && { echo "nginx passed X-Accel-Redirect on to the client" >&2; exit 1; }

rps() { wrk -t2 -c"$CONNS" -d"$DURATION" "$1" | awk '/Requests\/sec/ {print $2}'; }
# median MB/s of ROUNDS curl downloads (alternating servers is done by the caller)
speed() { curl -fso /dev/null -w '%{speed_download}' "$1" | awk '{printf "%.0f", $1/1e6}'; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)   ($(nproc) CPUs)"
curl -fso /dev/null "$small_url"
n_all=() a_all=() x_all=() g_all=()
for _ in $(seq "$RPS_ROUNDS"); do
	n_all+=("$(rps "http://127.0.0.1:$nginx_port/4k.bin")")
	a_all+=("$(rps "$small_url")")
	x_all+=("$(rps "$accel_small_url")")
	g_all+=("$(rps "http://127.0.0.1:$gofs_port/4k.bin")")
done
n_rps=$(median "${n_all[@]}")
a_rps=$(median "${a_all[@]}")
x_rps=$(median "${x_all[@]}")
g_rps=$(median "${g_all[@]}")
n_mb=() a_mb=() x_mb=() g_mb=()
for _ in $(seq "$ROUNDS"); do
	n_mb+=("$(speed "http://127.0.0.1:$nginx_port/big.bin")")
	a_mb+=("$(speed "$big_url")")
	x_mb+=("$(speed "$accel_big_url")")
	g_mb+=("$(speed "http://127.0.0.1:$gofs_port/big.bin")")
done
n_med=$(median "${n_mb[@]}")
a_med=$(median "${a_mb[@]}")
x_med=$(median "${x_mb[@]}")
g_med=$(median "${g_mb[@]}")
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo
ratio() { awk -v a="$1" -v n="$2" 'BEGIN {printf "%.2f", a/n}'; }
printf '%-48s %10s %10s %7s %7s %14s %7s %7s %13s %7s\n' "download" "nginx" "agent" "ratio" "target" "nginx+X-Accel" "ratio" "target" "Go FileServer" "ratio"
printf '%-48s %10s %10s %7s %7s %14s %7s %7s %13s %7s\n' "4 KiB, $CONNS conns, wrk $DURATION, median of $RPS_ROUNDS (req/s)" \
	"$n_rps" "$a_rps" "$(ratio "$a_rps" "$n_rps")" "-" "$x_rps" "$(ratio "$x_rps" "$n_rps")" "0.90" "$g_rps" "$(ratio "$g_rps" "$n_rps")"
printf '%-48s %10s %10s %7s %7s %14s %7s %7s %13s %7s\n' "$BIG_MIB MiB, curl median of $ROUNDS (MB/s)" \
	"$n_med" "$a_med" "$(ratio "$a_med" "$n_med")" "0.95" "$x_med" "$(ratio "$x_med" "$n_med")" "0.90" "$g_med" "$(ratio "$g_med" "$n_med")"
echo "  (nginx+X-Accel: nginx in front of the agent (deploy/nginx/agent-files.conf), the agent checking each download and"
echo "   answering X-Accel-Redirect (AGENT_ACCEL_REDIRECT), nginx sending the file; ratios against nginx alone)"
echo "  (req/s runs: nginx ${n_all[*]}; agent ${a_all[*]}; nginx+X-Accel ${x_all[*]}; Go FileServer ${g_all[*]})"
echo "  (MB/s runs: nginx ${n_mb[*]}; agent ${a_mb[*]}; nginx+X-Accel ${x_mb[*]}; Go FileServer ${g_mb[*]})"

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
