package cleanup_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/agentura/agentura/cleanup"
	"github.com/agentura/agentura/fileserve"
)

// ExampleSweeper keeps outputs for a day and staged uploads for an hour,
// sweeping at start-up and then on a cron schedule, every ten minutes. The
// store is any fileserve.Store, here a disk store as a program beside the
// agents would open their folder; sweepers sharing a store need no
// coordination. The clock is moved two hours ahead so that the staged file
// has expired while the output has not.
func ExampleSweeper() {
	dir, err := os.MkdirTemp("", "agentura-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := fileserve.NewDiskStore(dir)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	report, _ := store.Put(ctx, fileserve.NewFile{Area: fileserve.Outputs, Owner: "alice", Name: "report.md"},
		strings.NewReader("# Report\n"))
	upload, _ := store.Put(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: "alice", Name: "scan.pdf"},
		strings.NewReader("%PDF-1.7\n"))

	sweeper, err := cleanup.New(cleanup.Config{
		Store: store,
		Rules: []cleanup.Rule{
			{Area: fileserve.Outputs, TTL: 24 * time.Hour}, // AGENT_OUTPUT_TTL
			{Area: fileserve.Staging, TTL: time.Hour},      // AGENT_STAGING_TTL
		},
		Schedule: "@every 10m", // AGENT_CLEANUP_SCHEDULE
		Logger:   slog.New(slog.DiscardHandler),
		Now:      func() time.Time { return time.Now().Add(2 * time.Hour) },
	})
	if err != nil {
		log.Fatal(err)
	}
	// Start sweeps once in the background, then keeps to the schedule.
	if err := sweeper.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer sweeper.Stop()
	<-sweeper.StartupDone()

	_, err = store.Stat(ctx, fileserve.Staging, "alice", upload.ID)
	fmt.Println("scan.pdf swept:", errors.Is(err, fileserve.ErrNotFound))
	_, err = store.Stat(ctx, fileserve.Outputs, "alice", report.ID)
	fmt.Println("report.md kept:", err == nil)

	// A bad schedule is refused with what would have been accepted.
	_, err = cleanup.New(cleanup.Config{Store: store, Rules: []cleanup.Rule{{Area: fileserve.Outputs, TTL: time.Hour}}, Schedule: "every 10m"})
	fmt.Println(err)
	// Output:
	// scan.pdf swept: true
	// report.md kept: true
	// cleanup: schedule "every 10m" is not valid (expected exactly 5 fields, found 2: [every 10m]); use a descriptor such as "@every 10m", "@hourly", "@daily", "@weekly" or "@monthly", or a standard 5-field cron spec "minute hour day-of-month month day-of-week" such as "*/5 * * * *" or "0 3 * * *"
}
