package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// followedLog is a run's log as the console's rolling-log page showed it.
type followedLog struct {
	chunks []logChunk // every answer, in order
	lines  string     // the content of the answers that brought lines
	ended  bool       // an answer said end
}

// froms are the line numbers the reads asked for.
func (f followedLog) froms() []int {
	out := make([]int, len(f.chunks))
	for i, ch := range f.chunks {
		out[i] = ch.FromLineNum
	}
	return out
}

func (f followedLog) String() string {
	var parts []string
	for _, ch := range f.chunks {
		parts = append(parts, fmt.Sprintf("lines %d–%d end=%v", ch.FromLineNum, ch.ToLineNum, ch.End))
	}
	return fmt.Sprintf("%d reads [%s], last content %q", len(f.chunks), strings.Join(parts, "; "), truncate(lastContent(f.chunks), 200))
}

func lastContent(chunks []logChunk) string {
	if len(chunks) == 0 {
		return ""
	}
	return chunks[len(chunks)-1].LogContent
}

// consolePoll is how often the console's rolling-log page asks for more (ui.md §6:
// every 3 s until the admin says end), and logFollowReads how many reads the suite
// grants a finished run's log to end: 30 s of the page's polling. A finished run's log
// only grows by what the executor appends once the admin took its result (xxl-job-core
// 3.x writes "callback finish" after the result line), which the next read or two
// bring; a log that still has not ended after that never will.
const (
	consolePoll    = 3 * time.Second
	logFollowReads = 10
)

// followLog reads a run's log as the console's rolling-log page does: from line 1, each
// next read from the line after the last one received, until an answer says end, at
// most maxReads reads with wait() between them. The admin ends a log only when a read
// brings no new line and the run has its result (wire-protocol.md §5), so a log the
// executor appends to after the result (xxl-job-core 3.x) ends one read later than the
// first read past the result. A read answered for another line than asked is an error,
// as is a failed read.
func followLog(read func(from int) (logChunk, error), maxReads int, wait func()) (followedLog, error) {
	var f followedLog
	from := 1
	for n := 0; n < maxReads; n++ {
		if n > 0 {
			wait()
		}
		ch, err := read(from)
		if err != nil {
			return f, fmt.Errorf("read from line %d: %w", from, err)
		}
		f.chunks = append(f.chunks, ch)
		if ch.FromLineNum != from {
			return f, fmt.Errorf("read from line %d answered lines %d–%d", from, ch.FromLineNum, ch.ToLineNum)
		}
		if ch.ToLineNum >= ch.FromLineNum {
			f.lines += ch.LogContent
			from = ch.ToLineNum + 1
		}
		if ch.End {
			f.ended = true
			return f, nil
		}
	}
	return f, nil
}

// recordedLog is an executor's log file for followLog's tests: lines as an executor
// wrote them, served as xxl-job-core's /log serves them (lines from fromLineNum to the
// last, toLineNum the file's line count, isEnd false), behind the admin's rule of
// ending a read that brought no line of a run with a result.
type recordedLog struct {
	lines   []string
	visible int  // lines written so far
	handled bool // the log row has its result
	reads   int
	// grow, when set, is called after each read with the number of reads so far and
	// returns how many lines are written by then.
	grow func(reads int) int
}

func (r *recordedLog) read(from int) (logChunk, error) {
	ch := logChunk{FromLineNum: from, ToLineNum: r.visible}
	if from <= r.visible {
		ch.LogContent = strings.Join(r.lines[from-1:r.visible], "\n") + "\n"
	}
	ch.End = ch.FromLineNum > ch.ToLineNum && r.handled
	r.reads++
	if r.grow != nil {
		r.visible = min(len(r.lines), r.grow(r.reads))
	}
	return ch, nil
}

// java342Log is the log of a finished demoJobHandler run as an xxl-job-core 3.4.2
// executor answered /log for it, recorded after its callback had gone through:
// testdata/java342-log-read.txt, taken from the exchange transcripts.
func java342Log(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/java342-log-read.txt")
	if err != nil {
		t.Fatal(err)
	}
	var body string
	for _, ln := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(ln, "{") {
			body = ln
		}
	}
	var env struct {
		Code int `json:"code"`
		Data struct {
			FromLineNum int    `json:"fromLineNum"`
			ToLineNum   int    `json:"toLineNum"`
			LogContent  string `json:"logContent"`
			IsEnd       bool   `json:"isEnd"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("recorded /log answer %q: %v", body, err)
	}
	lines := strings.Split(strings.TrimSuffix(env.Data.LogContent, "\n"), "\n")
	if env.Code != 200 || env.Data.FromLineNum != 1 || env.Data.ToLineNum != len(lines) || env.Data.IsEnd {
		t.Fatalf("recorded /log answer is not a whole log from line 1 left open by the executor: %s", body)
	}
	return lines
}

// The recorded 3.4.2 log has its callback line after the result line: that line is
// written by the callback thread once the admin took the result, which is why the
// first read past the result need not end the log.
func TestJava342LogEndsWithCallbackLine(t *testing.T) {
	lines := java342Log(t)
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4: %q", len(lines), lines)
	}
	if !strings.Contains(lines[2], "Result: handleCode=200") || !strings.Contains(lines[3], "callback finish") {
		t.Fatalf("want the result line, then the callback line: %q", lines[2:])
	}
}

// A 3.4.2 run read when only its result line was written: the next read brings the
// callback line (and does not end), the one after it brings nothing and ends.
func TestFollowLogJava342CallbackLineAfterResult(t *testing.T) {
	lines := java342Log(t)
	log := &recordedLog{lines: lines, visible: 3, handled: true, grow: func(int) int { return 4 }}
	waits := 0
	f, err := followLog(log.read, logFollowReads, func() { waits++ })
	if err != nil {
		t.Fatal(err)
	}
	if !f.ended || len(f.chunks) != 3 || waits != 2 {
		t.Fatalf("followed %s (waits %d), want 3 reads ending on the third", f, waits)
	}
	if got := f.froms(); got[0] != 1 || got[1] != 4 || got[2] != 5 {
		t.Fatalf("reads from lines %v, want 1, 4, 5", got)
	}
	// The read right past the result is the one a single read-past-the-end check made.
	if second := f.chunks[1]; second.End || second.FromLineNum != 4 || second.ToLineNum != 4 || !strings.Contains(second.LogContent, "callback finish") {
		t.Fatalf("second read %+v, want line 4 (the callback line), not ended", second)
	}
	if want := strings.Join(lines, "\n") + "\n"; f.lines != want {
		t.Fatalf("followed content %q, want the whole log %q", f.lines, want)
	}
}

// The same log read after the callback line was written ends one read after line 4,
// as any executor's finished log does.
func TestFollowLogJava342Complete(t *testing.T) {
	log := &recordedLog{lines: java342Log(t), visible: 4, handled: true}
	f, err := followLog(log.read, logFollowReads, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if !f.ended || len(f.chunks) != 2 || f.chunks[1].FromLineNum != 5 {
		t.Fatalf("followed %s, want the read from line 5 to end it", f)
	}
}

// A log whose run never gets a result (or that keeps growing) never ends: followLog
// gives up after maxReads, reporting it unended, so the scenario fails.
func TestFollowLogNeverEnds(t *testing.T) {
	lines := java342Log(t)
	for _, tc := range []struct {
		name string
		log  *recordedLog
	}{
		{"no result", &recordedLog{lines: lines, visible: 3, handled: false, grow: func(int) int { return 4 }}},
		{"growing", &recordedLog{lines: append(lines, lines...), visible: 1, handled: true, grow: func(n int) int { return 1 + n }}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := followLog(tc.log.read, 5, func() {})
			if err != nil {
				t.Fatal(err)
			}
			if f.ended || len(f.chunks) != 5 || tc.log.reads != 5 {
				t.Fatalf("followed %s, want 5 reads without an end", f)
			}
		})
	}
}

// An executor that ends its own log (the npm SDK sets isEnd once its "finished" line
// is written) ends the follow on the first read.
func TestFollowLogExecutorEnds(t *testing.T) {
	read := func(from int) (logChunk, error) {
		return logChunk{FromLineNum: from, ToLineNum: 3, LogContent: "a\nb\nc\n", End: true}, nil
	}
	f, err := followLog(read, logFollowReads, func() { t.Fatal("waited after the end") })
	if err != nil || !f.ended || len(f.chunks) != 1 {
		t.Fatalf("followed %s, %v; want one read", f, err)
	}
}

// An answer for other lines than asked is not the log the page would show.
func TestFollowLogWrongLines(t *testing.T) {
	read := func(int) (logChunk, error) { return logChunk{FromLineNum: 1, ToLineNum: 2, LogContent: "a\nb\n"}, nil }
	f, err := followLog(read, logFollowReads, func() {})
	if err == nil || len(f.chunks) != 2 {
		t.Fatalf("followed %s, %v; want an error on the second read (from line 3)", f, err)
	}
}
