package bunstore_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// eventSink records what a change feed delivers, in order.
type eventSink struct{ events chan string }

func newEventSink() *eventSink { return &eventSink{events: make(chan string, 64)} }

func (s *eventSink) Changed(c resources.Change) { s.events <- c.Encode() }
func (s *eventSink) Resync()                    { s.events <- "resync" }

// next waits for the sink's next event and fails unless it is want.
func (s *eventSink) next(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-s.events:
		if got != want {
			t.Fatalf("feed delivered %s, want %s", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("feed delivered nothing in 10 s, want %s", want)
	}
}

// runFeed opens a connection pool on dsn (a replica) and runs its change
// feed into a new sink until the test ends; it returns once the feed listens.
func runFeed(t *testing.T, dsn string, log *testkit.LockedBuffer) (*bunstore.ChangeFeed, *eventSink, *bun.DB) {
	t.Helper()
	db, err := bunstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	feed, err := bunstore.NewChangeFeed(dsn, db, slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	sink := newEventSink()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); feed.Run(ctx, sink) }()
	t.Cleanup(func() { cancel(); <-done; _ = db.Close() }) // before the database is dropped
	sink.next(t, "resync")
	// It counts as listening right after the resync.
	testkit.Eventually(t, 5*time.Second, "the resynced feed reports listening", feed.Listening)
	return feed, sink, db
}

func TestChangeFeed_OtherReplicaReceivesPublishedChange(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, sinkA, _ := runFeed(t, dsn, &testkit.LockedBuffer{})
	_, sinkB, _ := runFeed(t, dsn, &testkit.LockedBuffer{})
	for _, c := range []resources.Change{
		resources.TokenChanged(7),
		resources.PrincipalChanged(resources.PrincipalUser, 3),
		{Kind: resources.ChangeAPISwitch},
	} {
		a.Publish(context.Background(), c)
		sinkA.next(t, c.Encode()) // applied at once in the publishing process
		sinkB.next(t, c.Encode())
		sinkA.next(t, c.Encode()) // and again through its own LISTEN
	}
}

func TestChangeFeed_LostConnectionFallsBackAndResyncsWhenBack(t *testing.T) {
	dsn := pgtest.DSN(t)
	log := &testkit.LockedBuffer{}
	a, sinkA, db := runFeed(t, dsn, log)
	var killed int
	err := db.NewRaw("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "+
		"WHERE application_name = 'platformapi change feed' AND datname = current_database()").
		Scan(context.Background(), &killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminate the listening backend: %d terminated, %v", killed, err)
	}
	sinkA.next(t, "resync") // listening again: everything cached is dropped
	for _, want := range []string{"change feed (PostgreSQL) lost", "change feed (PostgreSQL) listening"} {
		if strings.Count(log.String(), want) < 1 {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	a.Publish(context.Background(), resources.TokenChanged(9))
	sinkA.next(t, resources.TokenChanged(9).Encode())
	sinkA.next(t, resources.TokenChanged(9).Encode())
}

func TestChangeFeed_MalformedNotificationResyncs(t *testing.T) {
	dsn := pgtest.DSN(t)
	_, sink, db := runFeed(t, dsn, &testkit.LockedBuffer{})
	for _, payload := range []string{"not json", `{"token_id":4}`} {
		if _, err := db.ExecContext(context.Background(), "SELECT pg_notify(?, ?)",
			bunstore.ChangeChannel, payload); err != nil {
			t.Fatal(err)
		}
		sink.next(t, "resync")
	}
}

// TestChangeFeed_ChangeOfANewerRelease_DeliveredNotResynced: in a rolling
// update a newer release's notification may carry a member or a kind this
// release does not know. The known part is delivered (the credential cache
// drops everything for a kind it does not know) and the feed listens on.
func TestChangeFeed_ChangeOfANewerRelease_DeliveredNotResynced(t *testing.T) {
	dsn := pgtest.DSN(t)
	feed, sink, db := runFeed(t, dsn, &testkit.LockedBuffer{})
	for _, tc := range []struct{ name, payload, want string }{
		{"member added to a known kind", `{"kind":"token","token_id":4,"reason":"expired"}`,
			resources.TokenChanged(4).Encode()},
		{"kind added later", `{"kind":"session","session_id":9,"scope":{"all":true}}`,
			`{"kind":"session"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := db.ExecContext(context.Background(), "SELECT pg_notify(?, ?)",
				bunstore.ChangeChannel, tc.payload); err != nil {
				t.Fatal(err)
			}
			sink.next(t, tc.want)
			if !feed.Listening() {
				t.Fatal("the feed stopped listening")
			}
		})
	}
}
