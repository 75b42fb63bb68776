package attack

// Escapes E16 and E17, the unclear quota refresh, and the fault run's
// storage findings of issue 30, each on the built binaries; and deleting and
// revoking on two replicas sharing a store. Each test logs its figures.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/s3test"
)

// tusMeta is the Upload-Metadata of a file name.
func tusMeta(name string) string {
	return "filename " + base64.StdEncoding.EncodeToString([]byte(name))
}

// tusNew creates an upload of length bytes on a; it returns the answer and
// the upload's URL.
func tusNew(t *testing.T, a *mcptest.Agent, length int, meta string) (reply, string) {
	t.Helper()
	r := do(t, http.MethodPost, a.URL+"/uploads/tus/", nil, "Tus-Resumable", "1.0.0", "Upload-Length", strconv.Itoa(length), "Upload-Metadata", meta)
	return r, r.header.Get("Location")
}

// tusPatch sends body at offset.
func tusPatch(t *testing.T, loc string, offset int, body []byte) reply {
	t.Helper()
	return do(t, http.MethodPatch, loc, bytes.NewReader(body), "Tus-Resumable", "1.0.0", "Content-Type", "application/offset+octet-stream", "Upload-Offset", strconv.Itoa(offset))
}

// dirBytes is the size of the regular files below dir.
func dirBytes(dir string) (n int64, files int) {
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
			files++
		}
		return nil
	})
	return n, files
}

// randomBytes is n bytes of a seeded random stream.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 30))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// E16: unfinished tus uploads count against the owner's quota from their
// creation. The escape held 84 MB in tus/ under a 5 MiB quota, 16 uploads
// of 5 MiB - 1 each, and a 4 MiB /uploads was still accepted.
func TestTusUnfinishedUploadsInQuota(t *testing.T) {
	const quota, size = 5 << 20, 5 << 20
	data := t.TempDir()
	a := mcptest.StartAgent(t, fileagentBinary(t), "AGENT_DATA_DIR="+data, "AGENT_SIGNING_KEY="+signingKey,
		fmt.Sprintf("AGENT_OWNER_QUOTA_BYTES=%d", quota), fmt.Sprintf("AGENT_MAX_UPLOAD_BYTES=%d", size), "AGENT_RATE_LIMIT=0")
	defer a.Stop(t)
	chunk := randomBytes(size-1, 16)
	created, refused := 0, 0
	for k := range 16 {
		r, loc := tusNew(t, a, size, tusMeta(fmt.Sprintf("q%d.bin", k)))
		if r.status != http.StatusCreated {
			if r.status != http.StatusInsufficientStorage || !strings.Contains(string(r.body), "quota") {
				t.Fatalf("upload %d refused with %s; want 507 naming the quota", k, r)
			}
			refused++
			continue
		}
		created++
		if p := tusPatch(t, loc, 0, chunk); p.status != http.StatusNoContent {
			t.Fatalf("PATCH of upload %d: %s", k, p)
		}
	}
	var held int64
	parts, _ := filepath.Glob(filepath.Join(data, "tus", "*", "*.part"))
	flat, _ := filepath.Glob(filepath.Join(data, "tus", "*.part")) // the layout before owner folders
	for _, p := range append(parts, flat...) {
		if fi, err := os.Stat(p); err == nil {
			held += fi.Size()
		}
	}
	total, _ := dirBytes(filepath.Join(data, "tus"))
	r, _ := upload(t, a, "", "after.bin", make([]byte, 4<<20))
	t.Logf("16 unfinished 5 MiB uploads under a %d MiB quota: %d created, %d refused (507); their bytes on disk %.2f MiB (tus/ in all %d bytes); a 4 MiB /uploads then answers %d",
		quota>>20, created, refused, float64(held)/(1<<20), total, r.status)
	if held > quota {
		t.Errorf("unfinished uploads hold %d bytes on disk under a %d-byte quota", held, quota)
	}
	if r.status != http.StatusInsufficientStorage {
		t.Errorf("a 4 MiB upload beside a 5 MiB unfinished upload under a 5 MiB quota: %s; want 507", r)
	}
}

// E17: Upload-Metadata is capped, records keep the name alone, and they
// count against the quota. The escape stored ~0.9 MB of metadata per record,
// outside the quota (262 records: 348 MB), and each new upload read them
// all (3.6-6.3 s).
func TestTusRecordsBounded(t *testing.T) {
	const quota = 64 << 10
	data := t.TempDir()
	a := mcptest.StartAgent(t, fileagentBinary(t), "AGENT_DATA_DIR="+data, "AGENT_SIGNING_KEY="+signingKey,
		fmt.Sprintf("AGENT_OWNER_QUOTA_BYTES=%d", quota), "AGENT_RATE_LIMIT=0")
	defer a.Stop(t)
	big := tusMeta("x.bin") + ",pad " + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 700_000))
	r, _ := tusNew(t, a, 1, big)
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "Upload-Metadata") {
		t.Errorf("a 0.9 MB Upload-Metadata: %s; want 400 naming the header", r)
	}
	// Metadata under the cap is taken, but only the name is kept; each
	// record counts, so an owner cannot pile up records past the quota.
	fit := tusMeta("x.bin") + ",pad " + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 5000))
	finished, last := 0, reply{}
	for range 100 {
		r, loc := tusNew(t, a, 1, fit)
		if r.status != http.StatusCreated {
			last = r
			break
		}
		if p := tusPatch(t, loc, 0, []byte("q")); p.status != http.StatusNoContent {
			last = p
			break
		}
		finished++
	}
	recBytes, records := dirBytes(filepath.Join(data, "tus"))
	t.Logf("1-byte uploads with 6.7 KB of metadata under a %d KiB quota: %d finished before %d; tus/ holds %d files, %d bytes",
		quota>>10, finished, last.status, records, recBytes)
	if last.status != http.StatusInsufficientStorage {
		t.Errorf("100 finished uploads' records never met the quota (last answer %s); want 507 once they fill it", last)
	}
	if records > 0 && recBytes/int64(records) > 1024 {
		t.Errorf("records average %d bytes: more than the name is kept", recBytes/int64(records))
	}
}

// Unclear (issue 30): once the sweeper deleted an owner's expired files,
// uploads kept getting 507 until the quota's next refresh (a minute). What
// expires is free at once.
func TestSweptSpaceFreesQuotaAtOnce(t *testing.T) {
	const quota = 5 << 20
	data := t.TempDir()
	a := mcptest.StartAgent(t, fileagentBinary(t), "AGENT_DATA_DIR="+data, "AGENT_SIGNING_KEY="+signingKey,
		fmt.Sprintf("AGENT_OWNER_QUOTA_BYTES=%d", quota), "AGENT_STAGING_TTL=2s", "AGENT_CLEANUP_SCHEDULE=@every 1s")
	defer a.Stop(t)
	if r, _ := upload(t, a, "", "first.bin", make([]byte, 4<<20)); r.status != http.StatusCreated {
		t.Fatalf("first upload: %s", r)
	}
	if r, _ := upload(t, a, "", "second.bin", make([]byte, 4<<20)); r.status != http.StatusInsufficientStorage {
		t.Fatalf("second upload within the TTL: %s; want 507", r)
	}
	waitFor(t, "the sweeper deleting the expired upload", func() bool { return diskFiles(data, "staging") == 0 })
	swept := time.Now()
	r, _ := upload(t, a, "", "third.bin", make([]byte, 4<<20))
	t.Logf("an upload %v after the sweep deleted the owner's expired file: %d", time.Since(swept).Round(time.Millisecond), r.status)
	if r.status != http.StatusCreated {
		t.Errorf("an upload once the expired file was swept: %s; want 201 (the swept space is free at once)", r)
	}
}

// A file past its TTL is never served, whether or not the sweeper has
// deleted it yet: here the sweeper is held back (an hourly schedule), and
// the file is asked for at TTL + 1 s. The fault run downloaded files of a
// 5 s TTL at 9.1 s of age.
func TestExpiredFileNotServedWhileSweeperLags(t *testing.T) {
	data := t.TempDir()
	a := mcptest.StartAgent(t, fileagentBinary(t), "AGENT_DATA_DIR="+data, "AGENT_SIGNING_KEY="+signingKey, "AGENT_MCP_STATELESS=true",
		"AGENT_STAGING_TTL=3s", "AGENT_URL_TTL=1h", "AGENT_CLEANUP_SCHEDULE=@every 1h")
	defer a.Stop(t)
	r, u := upload(t, a, "", "brief.txt", []byte("short-lived"))
	status(t, r, http.StatusCreated)
	status(t, do(t, http.MethodGet, u, nil), http.StatusOK)
	time.Sleep(4 * time.Second)
	if diskFiles(data, "staging") != 1 {
		t.Fatal("the sweeper is not held back: the file is gone from disk, the test proves nothing")
	}
	got := do(t, http.MethodGet, u, nil)
	res := call(t, a, "", "inspect_file", map[string]any{"source": map[string]any{"name": "brief.txt", "content": u}})
	t.Logf("at TTL + 1 s, still on disk: GET %d, as a tool input: error %v", got.status, res.isError)
	if got.status != http.StatusNotFound {
		t.Errorf("GET at TTL + 1 s: %s; want 404", got)
	}
	if !res.isError {
		t.Errorf("a file past its TTL was read as a tool input: %s", trunc(res.text))
	}
}

// seedExpired writes n files of the staging area straight into the disk
// store's layout at data, created two hours ago, as a store of an earlier
// layout holds them (no expiry index: the first sweep indexes them).
func seedExpired(t *testing.T, data string, n int) {
	t.Helper()
	created := time.Now().Add(-2 * time.Hour).UTC()
	for i := range n {
		m := fileserve.Meta{ID: fileserve.NewID(), Area: fileserve.Staging, Owner: fmt.Sprintf("owner-%d", i%50), Name: "f.txt",
			MIMEType: "text/plain; charset=utf-8", Size: 1, SHA256: "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb", Created: created}
		dir := filepath.Join(data, string(m.Area), fileserve.OwnerKey(m.Owner), m.ID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, "data"), []byte("a"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "meta.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// The start-up sweep of 60,000 expired files: the agent serves while it
// runs, /healthz answers throughout, /readyz says not ready for a bounded
// time at most. The fault run found /healthz dead for the whole sweep
// (46.5 s), long enough for a liveness probe to kill the pod.
func TestStartupSweepDoesNotBlockHealthz(t *testing.T) {
	const n = 60_000
	data := t.TempDir()
	began := time.Now()
	seedExpired(t, data, n)
	t.Logf("seeded %d expired files in %v", n, time.Since(began).Round(time.Millisecond))
	a := mcptest.NewAgent(t, fileagentBinary(t), "AGENT_DATA_DIR="+data, "AGENT_SIGNING_KEY="+signingKey, "AGENT_STAGING_TTL=1h", "AGENT_CLEANUP_SCHEDULE=@every 1h")
	hc := &http.Client{Timeout: time.Second}
	a.Start(t)
	defer a.Stop(t)
	start := time.Now()
	var (
		firstOK, readyAt time.Time
		failsAfterOK     int
		longestDead      time.Duration
		lastOK           time.Time
	)
	deadline := start.Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := hc.Get(a.URL + "/healthz")
		now := time.Now()
		ok := err == nil && resp.StatusCode == http.StatusOK
		if resp != nil {
			resp.Body.Close()
		}
		switch {
		case ok && firstOK.IsZero():
			firstOK, lastOK = now, now
		case ok:
			longestDead = max(longestDead, now.Sub(lastOK))
			lastOK = now
		case !firstOK.IsZero():
			failsAfterOK++
		}
		if readyAt.IsZero() {
			if resp, err := hc.Get(a.URL + "/readyz"); err == nil {
				if resp.StatusCode == http.StatusOK {
					readyAt = time.Now()
				}
				resp.Body.Close()
			}
		}
		if strings.Contains(a.Logs(), "cleanup: sweep done") && !readyAt.IsZero() {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var sweep time.Duration
	if m := sweepDuration.FindStringSubmatch(a.Logs()); m != nil {
		sweep, _ = time.ParseDuration(m[1])
	}
	left := diskFiles(data, "staging")
	t.Logf("start-up sweep of %d files took %v; /healthz first answered %v after start, then never failed (%d failures, longest gap %v); /readyz 200 after %v; %d files left",
		n, sweep.Round(time.Millisecond), firstOK.Sub(start).Round(time.Millisecond), failsAfterOK, longestDead.Round(time.Millisecond), readyAt.Sub(start).Round(time.Millisecond), left)
	if firstOK.IsZero() {
		t.Fatal("/healthz never answered")
	}
	if sweep < 2*time.Second {
		t.Logf("the sweep took only %v here: the test shows little on a machine this fast", sweep)
	}
	if firstOK.Sub(start) > 10*time.Second || (sweep > 2*time.Second && firstOK.Sub(start) >= sweep) {
		t.Errorf("/healthz first answered %v after start, the sweep took %v: it does not answer while the start-up sweep runs", firstOK.Sub(start), sweep)
	}
	if failsAfterOK > 0 {
		t.Errorf("/healthz failed %d times once up", failsAfterOK)
	}
	if readyAt.IsZero() || readyAt.Sub(start) > 30*time.Second {
		t.Errorf("/readyz was not ready within 30 s of start (at %v)", readyAt.Sub(start))
	}
	if left != 0 {
		t.Errorf("%d expired files left after the start-up sweep", left)
	}
}

// s3Env is an agent environment on a fresh bucket of srv.
func s3Env(srv *s3test.Server, bucket string, more ...string) []string {
	env := append([]string{"AGENT_STORAGE_URL=" + srv.StorageURL(bucket), "AGENT_SIGNING_KEY=" + signingKey}, more...)
	for k, v := range srv.Env() {
		env = append(env, k+"="+v)
	}
	return env
}

// S3 killed during a tus upload's last PATCH: the 40 MiB received are kept,
// the PATCH answers a retryable error, HEAD tells the client to resume
// (not 404), and once S3 is back the resumed upload is stored whole. The
// fault run lost them (500, then 404). /readyz answers from state during
// the outage, quickly, naming no server address.
func TestS3KilledDuringTusLastPatch(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	a := mcptest.StartAgent(t, fileagentBinary(t), s3Env(srv, bucket, "AGENT_MAX_UPLOAD_BYTES=64000000")...)
	defer a.Stop(t)
	const size = 40 << 20
	content := randomBytes(size, 40)
	r, loc := tusNew(t, a, size, tusMeta("forty.bin"))
	status(t, r, http.StatusCreated)
	status(t, tusPatch(t, loc, 0, content[:size-1<<20]), http.StatusNoContent)

	srv.Kill(t)
	last := tusPatch(t, loc, size-1<<20, content[size-1<<20:])
	head := do(t, http.MethodHead, loc, nil, "Tus-Resumable", "1.0.0")
	// /readyz: every answer quick, from the last probe's state; not ready
	// once a probe has met the outage.
	var ready reply
	var readyTook, notReadyAfter time.Duration
	outage := time.Now()
	for time.Since(outage) < 20*time.Second {
		began := time.Now()
		ready = do(t, http.MethodGet, a.URL+"/readyz", nil)
		readyTook = max(readyTook, time.Since(began))
		if ready.status == http.StatusServiceUnavailable {
			notReadyAfter = time.Since(outage)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("S3 down: last PATCH %d (%s), HEAD %d offset %s; /readyz not ready %v into the outage, slowest answer %v: %s", last.status, strings.TrimSpace(string(last.body)),
		head.status, head.header.Get("Upload-Offset"), notReadyAfter.Round(time.Millisecond), readyTook.Round(time.Millisecond), ready.body)
	if ready.status != http.StatusServiceUnavailable {
		t.Errorf("/readyz still %s 20 s into the S3 outage", ready)
	}
	if last.status != http.StatusServiceUnavailable || last.header.Get("Retry-After") == "" {
		t.Errorf("last PATCH with S3 down: %s; want 503 with Retry-After", last)
	}
	if head.status != http.StatusOK || head.header.Get("Upload-Offset") != strconv.Itoa(size-1) {
		t.Fatalf("HEAD after the failed finish: %d offset %q; want 200 and %d (the upload kept)", head.status, head.header.Get("Upload-Offset"), size-1)
	}
	if readyTook > 2*time.Second {
		t.Errorf("/readyz took %v during the outage; want an answer from state", readyTook)
	}
	if strings.Contains(string(ready.body), srv.Endpoint) || strings.Contains(string(ready.body), bucket) {
		t.Errorf("/readyz shows the S3 endpoint or bucket: %s", ready)
	}

	srv.Restart(t)
	resume := tusPatch(t, loc, size-1, content[size-1:])
	if resume.status != http.StatusNoContent || resume.header.Get("File-Url") == "" {
		t.Fatalf("resumed PATCH once S3 is back: %s", resume)
	}
	got := do(t, http.MethodGet, resume.header.Get("File-Url"), nil)
	if got.status != http.StatusOK || sha256.Sum256(got.body) != sha256.Sum256(content) {
		t.Errorf("the stored upload: %d, %d bytes, same content %v", got.status, len(got.body), bytes.Equal(got.body, content))
	}
}

// metricSum adds the samples of a metric family (any labels) in /metrics.
func metricSum(t *testing.T, a *mcptest.Agent, name string) float64 {
	t.Helper()
	r := do(t, http.MethodGet, a.URL+"/metrics", nil)
	sum := 0.0
	for line := range strings.Lines(string(r.body)) {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			var v float64
			fmt.Sscan(line[strings.LastIndexByte(strings.TrimSpace(line), ' ')+1:], &v)
			sum += v
		}
	}
	return sum
}

// A replica killed between two outputs on S3 comes back on a fresh data
// folder (its container's volume lost), on the same bucket: the orphan
// output of the killed call is rolled back within a sweep of its journal's
// lease lapsing, and no quota counts it. The fault run found it kept for
// the output TTL (24 h), counted against the owner.
func TestS3ReplicaBackOnFreshVolume(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	bin := faultagentBinary(t)
	mark := filepath.Join(t.TempDir(), "blocked")
	env := s3Env(srv, bucket, "AGENT_MCP_STATELESS=true", "FAULT_MARK="+mark, "AGENT_OWNER_QUOTA_BYTES=104857600")
	a := mcptest.StartAgent(t, bin, append(env, "AGENT_DATA_DIR="+t.TempDir())...)
	callAsync(a, "two_outputs", map[string]any{"first_bytes": 100_000, "second_bytes": 300_000, "block": true})
	waitFile(t, mark)
	keys, _ := bucketKeys(t, srv.Client(), bucket, "outputs/")
	if metas := countSuffix(keys, "/meta.json"); metas != 1 {
		t.Fatalf("before the kill: %d outputs committed (%v), want the first one", metas, keys)
	}
	a.Kill(t)
	killed := time.Now()

	b := mcptest.StartAgent(t, bin, append(env, "AGENT_DATA_DIR="+t.TempDir(), "AGENT_CLEANUP_SCHEDULE=@every 1s")...)
	defer b.Stop(t)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		keys, _ = bucketKeys(t, srv.Client(), bucket, "outputs/")
		if countSuffix(keys, "/meta.json") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the orphan output of the killed replica is still stored 2 minutes later: %v", keys)
		}
		time.Sleep(250 * time.Millisecond)
	}
	gone := time.Since(killed)
	used := metricSum(t, b, "agentura_quota_used_bytes")
	t.Logf("the orphan output was rolled back %v after the kill (journal lease 30 s); the quota counts %.0f bytes", gone.Round(time.Millisecond), used)
	if used != 0 {
		t.Errorf("the restarted replica's quota counts %.0f bytes of the rolled-back output", used)
	}
}

// replicas starts two fileagents sharing a store (one data folder on disk,
// or one S3 bucket with a data folder each) and the public URL of a, with
// callers authenticated by JWT and a quota of 5 MiB.
func replicas(t *testing.T, onS3 bool) (a, b *mcptest.Agent) {
	t.Helper()
	env := []string{"AGENT_SIGNING_KEY=" + signingKey, "AGENT_AUTH=jwt", "AGENT_AUTH_JWT_SECRET=" + jwtSecret,
		"AGENT_OWNER_QUOTA_BYTES=5242880", "AGENT_MAX_UPLOAD_BYTES=5242880", "AGENT_RATE_LIMIT=0"}
	var dataA, dataB string
	if onS3 {
		srv := s3test.Start(t)
		env = s3Env(srv, srv.NewBucket(t), env...)
		dataA, dataB = t.TempDir(), t.TempDir()
	} else {
		dataA = t.TempDir()
		dataB = dataA
	}
	a = mcptest.StartAgent(t, fileagentBinary(t), append(env, "AGENT_DATA_DIR="+dataA)...)
	// Replicas behind one balancer share the public URL (the tokens'
	// audience); the test calls each at its own address.
	b = mcptest.StartAgent(t, fileagentBinary(t), append(env, "AGENT_DATA_DIR="+dataB, "AGENT_PUBLIC_URL="+a.URL)...)
	t.Cleanup(func() { a.Stop(t); b.Stop(t) })
	return a, b
}

// within polls cond every 20 ms for at most limit and returns how long it
// took, or -1.
func within(limit time.Duration, cond func() bool) time.Duration {
	began := time.Now()
	for time.Since(began) < limit {
		if cond() {
			return time.Since(began)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return -1
}

// Deleting and revoking on two replicas sharing a store: the owner deletes
// a file on one replica and the other frees its quota within a second;
// a URL revoked on one replica is refused by the other within a second;
// another owner can do neither to a file not his.
func TestDeleteAndRevokeAcrossReplicas(t *testing.T) {
	for _, onS3 := range []bool{false, true} {
		name := "disk"
		if onS3 {
			name = "s3"
		}
		t.Run(name, func(t *testing.T) {
			a, b := replicas(t, onS3)
			const auth = "Authorization"
			bearer := func(sub string) string { return "Bearer " + mcptest.BearerToken(t, jwtSecret, sub) }
			up := func(ag *mcptest.Agent, name string, n int) (reply, string) {
				return upload(t, ag, mcptest.BearerToken(t, jwtSecret, "alice"), name, randomBytes(n, uint64(n)))
			}
			r, u := up(a, "big.bin", 4<<20)
			status(t, r, http.StatusCreated)
			// b reads the usage now: it counts alice's 4 MiB.
			status(t, firstOf(up(b, "small.bin", 1)), http.StatusCreated)
			status(t, firstOf(up(b, "more.bin", 2<<20)), http.StatusInsufficientStorage)

			// mallory can neither delete nor, without the URL, revoke.
			status(t, do(t, http.MethodDelete, u, nil, auth, bearer("mallory")), http.StatusForbidden)
			status(t, do(t, http.MethodDelete, strings.Split(u, "?")[0], nil, auth, bearer("mallory")), http.StatusNotFound)
			status(t, do(t, http.MethodGet, u, nil), http.StatusOK)

			onB := strings.Replace(u, a.URL, b.URL, 1)
			status(t, do(t, http.MethodDelete, onB, nil, auth, bearer("mallory")), http.StatusForbidden)
			status(t, do(t, http.MethodDelete, u, nil, auth, bearer("alice")), http.StatusNoContent)
			freed := within(10*time.Second, func() bool {
				r, _ := up(b, "more.bin", 2<<20)
				return r.status == http.StatusCreated
			})
			gone := do(t, http.MethodGet, u, nil).status
			t.Logf("%s: deleted on replica A; replica B took the 2 MiB upload its quota refused after %v; GET of the URL on A: %d", name, freed.Round(time.Millisecond), gone)
			if freed < 0 || freed > 2*time.Second {
				t.Errorf("replica B freed the deleted file's quota after %v; want within a second (or so, on a busy machine)", freed)
			}
			if gone != http.StatusNotFound {
				t.Errorf("GET of a deleted file: %d, want 404", gone)
			}

			// Revoke one URL on B: A refuses it within a second; the file stays.
			r, v := up(a, "keep.bin", 1000)
			status(t, r, http.StatusCreated)
			status(t, do(t, http.MethodGet, v, nil), http.StatusOK)
			status(t, revokeReq(t, b.URL, v), http.StatusNoContent)
			refusedAfter := within(10*time.Second, func() bool { return do(t, http.MethodGet, v, nil).status == http.StatusForbidden })
			t.Logf("%s: revoked on replica B; replica A refused the URL after %v", name, refusedAfter.Round(time.Millisecond))
			if refusedAfter < 0 || refusedAfter > 2*time.Second {
				t.Errorf("replica A refused the revoked URL after %v; want within a second (or so, on a busy machine)", refusedAfter)
			}
		})
	}
}

// firstOf is the reply of an upload.
func firstOf(r reply, _ string) reply { return r }

// E18: a call's work folder counts against the owner's quota while the tool
// writes it. The escape: archive_files of one 5 MiB upload listed 100 times
// under a 20 MiB quota wrote a 508 MiB zip in the call's folder before the
// store refused it. Now the call is stopped once its folder passes what the
// owner has left, and says so.
func TestWorkFolderMeteredAgainstQuota(t *testing.T) {
	const quota = 20 << 20
	data := t.TempDir()
	a := mcptest.StartAgent(t, fileagentBinary(t), "AGENT_DATA_DIR="+data, "AGENT_SIGNING_KEY="+signingKey,
		fmt.Sprintf("AGENT_OWNER_QUOTA_BYTES=%d", quota), fmt.Sprintf("AGENT_MAX_UPLOAD_BYTES=%d", 5<<20), "AGENT_RATE_LIMIT=0",
		"AGENT_MCP_STATELESS=true")
	defer a.Stop(t)
	r, url := upload(t, a, "", "five.bin", randomBytes(5<<20, 18))
	if r.status != http.StatusCreated || url == "" {
		t.Fatalf("upload: %s", r)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	var peak int64
	go func() {
		defer close(done)
		for {
			if n, _ := dirBytes(data); n > peak {
				peak = n
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	sources := make([]any, 100)
	for i := range sources {
		sources[i] = url
	}
	res := call(t, a, "", "archive_files", map[string]any{"sources": sources, "name": "amp"})
	close(stop)
	<-done
	t.Logf("archive_files of a 5 MiB upload listed 100 times under a %d MiB quota: the data folder peaked at %.1f MiB; the answer: %.300s",
		quota>>20, float64(peak)/(1<<20), res.text)
	if !res.isError || !strings.Contains(res.text, "work folder") || !strings.Contains(res.text, "quota") {
		t.Errorf("the call's answer does not say its work folder passed the quota: %q", res.text)
	}
	if peak > 4*quota {
		t.Errorf("the data folder peaked at %d bytes under a %d-byte quota (the escape: 508 MiB)", peak, quota)
	}
	if left, _ := dirBytes(filepath.Join(data, "calls")); left != 0 {
		t.Errorf("the stopped call left %d bytes in calls/", left)
	}
}
