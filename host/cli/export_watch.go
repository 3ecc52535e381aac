package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/host/internal/backlogmd"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// pollEvery is how often a watch polls a daemon that cannot tell it of
// changes (one of an older cairn).
const pollEvery = 500 * time.Millisecond

// changesWait is how long one long poll of the daemon waits for a change.
const changesWait = 10 * time.Second

// errDaemonLost is a watch's daemon gone away: the watch reconnects.
var errDaemonLost = errors.New("the cairn daemon went away")

// watchMarkdown writes the project's board into dir and rewrites it after
// every change until SIGINT or SIGTERM: only the files whose bytes changed
// are written (atomically), and the files of tasks that moved folder or
// were renamed are removed (backlogmd.Sync). It works through the daemon
// when one serves, else through a host of its own; when its daemon goes
// away it connects again the same way.
func watchMarkdown(cmd *cobra.Command, configFile, slug, dir string) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var prev backlogmd.Board
	for {
		err := watchOnce(ctx, cmd, configFile, slug, dir, &prev)
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, errDaemonLost) {
			return err
		}
		fmt.Fprintf(os.Stderr, "cairn: %v; connecting again\n", err)
	}
}

// watchOnce follows one connection to the core area: the daemon, or a host
// of the command's own.
func watchOnce(ctx context.Context, cmd *cobra.Command, configFile, slug, dir string, prev *backlogmd.Board) error {
	c, err := openAreas(ctx, configFile, reads, "core")
	if err != nil {
		return err
	}
	defer c.close()
	feed := newChangeFeed(c)
	defer feed.close()
	seq, err := feed.next(ctx, ^uint64(0))
	if err != nil {
		return err
	}
	for {
		board, n, err := loadBoard(ctx, c, slug)
		if err != nil {
			if c.viaDaemon() && !daemonListens(c.paths) {
				return fmt.Errorf("%w (%v)", errDaemonLost, err)
			}
			return err
		}
		written, removed, err := backlogmd.Sync(dir, board, *prev)
		if err != nil {
			return errs.Newf(500, errs.Internal, "cannot write the board to %s: %v", dir, err)
		}
		if *prev == nil {
			fmt.Fprintf(cmd.OutOrStdout(), "exported %d tasks of project %s to %s; watching for changes (interrupt to stop)\n", n, slug, dir)
		} else if written+removed > 0 {
			fmt.Fprintf(os.Stderr, "cairn: %s: %d files written, %d removed\n", dir, written, removed)
		}
		*prev = board
		if seq, err = feed.next(ctx, seq); err != nil {
			return err
		}
	}
}

// changeFeed tells a watch when the core area's tasks changed.
type changeFeed struct {
	c *areaClient
	// counter counts the events of the command's own host; nil when the
	// daemon answers.
	counter *changeCounter
	stop    func()
	// poll is set once the daemon turns out not to count changes.
	poll bool
}

func newChangeFeed(c *areaClient) *changeFeed {
	f := &changeFeed{c: c, stop: func() {}}
	if !c.viaDaemon() {
		f.counter = newChangeCounter()
		f.stop = f.counter.follow(c.h.Bus)
	}
	return f
}

func (f *changeFeed) close() { f.stop() }

// next waits until the count of changes differs from after and answers
// it; an interrupted wait answers ctx's error.
func (f *changeFeed) next(ctx context.Context, after uint64) (uint64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return after, err
		}
		var seq uint64
		var err error
		switch {
		case f.counter != nil:
			seq = f.counter.wait(ctx, after, changesWait)
		case f.poll:
			t := time.NewTimer(pollEvery)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			return after + 1, ctx.Err()
		default:
			seq, err = f.ask(ctx, after)
		}
		if err != nil {
			return after, err
		}
		if seq != after {
			return seq, nil
		}
	}
}

// ask long-polls the daemon's change counter.
func (f *changeFeed) ask(ctx context.Context, after uint64) (uint64, error) {
	data, _ := json.Marshal(changesRequest{After: after, WaitMS: int(changesWait / time.Millisecond)})
	type answer struct {
		w   daemon.Welcome
		err error
	}
	done := make(chan answer, 1)
	go func() {
		w, err := daemon.Send(f.c.paths, daemon.Hello{Control: changesVerb, Data: data}, changesWait+callTimeout)
		done <- answer{w, err}
	}()
	var a answer
	select {
	case <-ctx.Done():
		return after, ctx.Err()
	case a = <-done:
	}
	if a.err != nil {
		if strings.Contains(a.err.Error(), "unknown control request") || strings.Contains(a.err.Error(), "does not count task changes") {
			f.poll = true
			return after + 1, nil
		}
		return after, fmt.Errorf("%w: %v", errDaemonLost, a.err)
	}
	var rep changesReply
	if err := json.Unmarshal(a.w.Status, &rep); err != nil {
		return after, errs.Newf(502, errs.Internal, "the cairn daemon answered %s with %q: %v", changesVerb, a.w.Status, err)
	}
	return rep.Seq, nil
}
