package tasks

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/internal/tasklife"
)

// Task statuses (part 2), from the one lifecycle definition the
// dashboard shares (internal/tasklife). New tasks are StatusBacklog.
const (
	StatusBacklog    = tasklife.Backlog
	StatusTodo       = tasklife.Todo
	StatusInProgress = tasklife.InProgress
	StatusBlocked    = tasklife.Blocked
	StatusReview     = tasklife.Review
	StatusDone       = tasklife.Done
	StatusCancelled  = tasklife.Cancelled
)

// Task priorities, lowest first. The default is PriorityNormal.
const (
	PriorityLow      = "low"
	PriorityNormal   = "normal"
	PriorityHigh     = "high"
	PriorityCritical = "critical"
)

// DefaultAssignee is the assignee of a task created without one.
const DefaultAssignee = "unassigned"

// Limits of part 8, exported so the wiring layer can put the same numbers
// in its JSON schemas.
const (
	MaxTitleLen         = 256
	MaxDescriptionLen   = 8000
	MaxLabels           = 20
	MaxEstimateHours    = 1000
	MaxProgress         = 100
	DefaultListLimit    = 50
	MaxListLimit        = 500
	DefaultNextLimit    = 20
	MaxNextLimit        = 100
	TimeLayout          = "2006-01-02T15:04:05.000Z"
	taskIDPrefix        = "T-"
	recordFormatVersion = 1
	// recordWithOrigin is the format of a record that also holds its
	// origin (origin.go), after the description; a record without one
	// keeps the first format, byte for byte.
	recordWithOrigin = 2
)

// Statuses lists every status in lifecycle order (for schema enums).
var Statuses = []string{StatusBacklog, StatusTodo, StatusInProgress, StatusBlocked, StatusReview, StatusDone, StatusCancelled}

// Priorities lists every priority from lowest to highest (for schema enums).
var Priorities = []string{PriorityLow, PriorityNormal, PriorityHigh, PriorityCritical}

// Status and priority codes are their index+1 in the lists above; 0 means
// "invalid". Priority codes therefore sort low < normal < high < critical.
func statusCode(s string) uint8 {
	for i, v := range Statuses {
		if v == s {
			return uint8(i + 1)
		}
	}
	return 0
}

func statusName(c uint8) string {
	if c == 0 || int(c) > len(Statuses) {
		return ""
	}
	return Statuses[c-1]
}

func priorityCode(p string) uint8 {
	for i, v := range Priorities {
		if v == p {
			return uint8(i + 1)
		}
	}
	return 0
}

func priorityName(c uint8) string {
	if c == 0 || int(c) > len(Priorities) {
		return ""
	}
	return Priorities[c-1]
}

var (
	codeDone      = statusCode(StatusDone)
	codeCancelled = statusCode(StatusCancelled)
)

// AllowedTransitions returns the statuses a task in status from may move
// to (the state machine of part 3; empty for the terminal states and for an
// unknown status).
func AllowedTransitions(from string) []string { return tasklife.Next(from) }

// CanTransition reports whether a task may move from one status to another.
// Staying in the same status is not a move; Update treats it as a no-op.
func CanTransition(from, to string) bool { return slices.Contains(tasklife.Next(from), to) }

// FormatTime renders t as D5 requires: UTC with milliseconds, like
// JavaScript's toISOString.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

func formatMillis(ms int64) string { return FormatTime(time.UnixMilli(ms)) }

// FormatTaskID renders task number n as its id (D6).
func FormatTaskID(n uint64) string { return taskIDPrefix + strconv.FormatUint(n, 10) }

// ParseTaskID returns the number of a well-formed task id ("T-<n>", n ≥ 1
// without leading zeros, so every number has exactly one spelling).
func ParseTaskID(id string) (uint64, bool) {
	rest, ok := strings.CutPrefix(id, taskIDPrefix)
	if !ok || rest == "" || rest[0] == '0' || len(rest) > 19 {
		return 0, false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	return n, err == nil
}

// record is a task as stored. It is encoded in a small binary format rather
// than JSON so task_list can filter 100,000 tasks without a JSON decode per
// task; the description comes last so scans can skip it.
type record struct {
	num           uint64
	project       string
	parent        uint64 // 0 = no parent
	status        uint8
	priority      uint8
	progress      float64
	assignee      string
	labels        []string
	hasEstimate   bool
	estimate      float64
	blockedReason string
	createdMs     int64
	updatedMs     int64
	createdBy     string
	updatedBy     string
	seq           uint64
	title         string
	description   string
	origin        Origin
}

func (r *record) id() string { return FormatTaskID(r.num) }

func (r *record) encode() []byte {
	n := 64 + len(r.project) + len(r.assignee) + len(r.blockedReason) + len(r.createdBy) + len(r.updatedBy) + len(r.title) + len(r.description)
	for _, l := range r.labels {
		n += len(l) + 2
	}
	hasOrigin := r.origin != (Origin{})
	if hasOrigin {
		n += 4 + len(r.origin.ID) + len(r.origin.Format) + len(r.origin.CreatedAt) + len(r.origin.UpdatedAt)
	}
	b := make([]byte, 0, n)
	if hasOrigin {
		b = append(b, recordWithOrigin)
	} else {
		b = append(b, recordFormatVersion)
	}
	b = appendStr(b, r.project)
	b = binary.AppendUvarint(b, r.parent)
	b = append(b, r.status, r.priority)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(r.progress))
	b = appendStr(b, r.assignee)
	lb := make([]byte, 0, 8)
	for _, l := range r.labels {
		lb = appendStr(lb, l)
	}
	b = binary.AppendUvarint(b, uint64(len(r.labels)))
	b = binary.AppendUvarint(b, uint64(len(lb)))
	b = append(b, lb...)
	if r.hasEstimate {
		b = append(b, 1)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(r.estimate))
	} else {
		b = append(b, 0)
	}
	b = appendStr(b, r.blockedReason)
	b = binary.AppendVarint(b, r.createdMs)
	b = binary.AppendVarint(b, r.updatedMs)
	b = appendStr(b, r.createdBy)
	b = appendStr(b, r.updatedBy)
	b = binary.AppendUvarint(b, r.seq)
	b = appendStr(b, r.title)
	b = appendStr(b, r.description)
	if hasOrigin {
		b = appendStr(b, r.origin.ID)
		b = appendStr(b, r.origin.Format)
		b = appendStr(b, r.origin.CreatedAt)
		b = appendStr(b, r.origin.UpdatedAt)
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// rawRecord aliases the bytes of a stored record. It is valid only inside
// the transaction that read it; scans use it to filter and sort without
// allocating, and materialize only the tasks they return.
type rawRecord struct {
	version       uint8
	num           uint64
	project       []byte
	parent        uint64
	status        uint8
	priority      uint8
	progress      float64
	assignee      []byte
	labelCount    int
	labels        []byte // labelCount length-prefixed strings
	hasEstimate   bool
	estimate      float64
	blockedReason []byte
	createdMs     int64
	updatedMs     int64
	createdBy     []byte
	updatedBy     []byte
	seq           uint64
	title         []byte
	description   []byte
	// origin holds the id, format and times of the task's source; nil in
	// a record without one.
	origin [4][]byte
}

var errCorrupt = errors.New("tasks: corrupt task record")

type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) byte1() uint8 {
	if len(d.b) < 1 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) f64() float64 {
	if len(d.b) < 8 {
		d.bad = true
		return 0
	}
	v := math.Float64frombits(binary.BigEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	l := d.uvarint()
	if d.bad || uint64(len(d.b)) < l {
		d.bad = true
		return nil
	}
	v := d.b[:l:l]
	d.b = d.b[l:]
	return v
}

// decodeRaw parses a stored record without copying.
func decodeRaw(num uint64, b []byte, r *rawRecord) error {
	d := decoder{b: b}
	if !d.head(num, r) {
		return errCorrupt
	}
	r.hasEstimate = d.byte1() == 1
	if r.hasEstimate {
		r.estimate = d.f64()
	} else {
		r.estimate = 0
	}
	r.blockedReason = d.bytes()
	r.createdMs = d.varint()
	r.updatedMs = d.varint()
	r.createdBy = d.bytes()
	r.updatedBy = d.bytes()
	r.seq = d.uvarint()
	r.title = d.bytes()
	r.description = d.bytes()
	r.origin = [4][]byte{}
	if r.version == recordWithOrigin {
		for i := range r.origin {
			r.origin[i] = d.bytes()
		}
	}
	if d.bad {
		return errCorrupt
	}
	return nil
}

// head decodes a record's fields up to its labels into r; false when the
// record is not of this format.
func (d *decoder) head(num uint64, r *rawRecord) bool {
	r.version = d.byte1()
	if r.version != recordFormatVersion && r.version != recordWithOrigin {
		return false
	}
	r.num = num
	r.project = d.bytes()
	r.parent = d.uvarint()
	r.status = d.byte1()
	r.priority = d.byte1()
	r.progress = d.f64()
	r.assignee = d.bytes()
	r.labelCount = int(d.uvarint())
	r.labels = d.bytes()
	return true
}

// eachLabel calls fn for every label of r until fn returns false.
func (r *rawRecord) eachLabel(fn func(l []byte) bool) {
	d := decoder{b: r.labels}
	for i := 0; i < r.labelCount && !d.bad; i++ {
		if !fn(d.bytes()) {
			return
		}
	}
}

// materialize copies r into a record that outlives the transaction.
func (r *rawRecord) materialize() *record {
	rec := &record{
		num:           r.num,
		project:       string(r.project),
		parent:        r.parent,
		status:        r.status,
		priority:      r.priority,
		progress:      r.progress,
		assignee:      string(r.assignee),
		labels:        make([]string, 0, r.labelCount),
		hasEstimate:   r.hasEstimate,
		estimate:      r.estimate,
		blockedReason: string(r.blockedReason),
		createdMs:     r.createdMs,
		updatedMs:     r.updatedMs,
		createdBy:     string(r.createdBy),
		updatedBy:     string(r.updatedBy),
		seq:           r.seq,
		title:         string(r.title),
		description:   string(r.description),
		origin:        Origin{ID: string(r.origin[0]), Format: string(r.origin[1]), CreatedAt: string(r.origin[2]), UpdatedAt: string(r.origin[3])},
	}
	r.eachLabel(func(l []byte) bool {
		rec.labels = append(rec.labels, string(l))
		return true
	})
	return rec
}
