package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// tmDecoder reads a tasks.json one token, or one value of at most
// maxTMValue bytes, at a time, and counts lines so that it can tell on
// which line a value starts.
type tmDecoder struct {
	dec *json.Decoder
	in  *tmCounter
}

// tmCounter hands the decoder its bytes, counting their newlines, and
// fails a read once the value being read has taken maxTMValue bytes.
type tmCounter struct {
	r     io.Reader
	left  int64
	lines int
}

var (
	errTMTooLong = errors.New("a value longer than the limit")
	errTMShape   = errors.New("not the expected JSON")
	errTMNoKey   = errors.New("no such key")
	newline      = []byte{'\n'}
)

func (c *tmCounter) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errTMTooLong
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	c.lines += bytes.Count(p[:n], newline)
	return n, err
}

// newTMDecoder reads r from its start.
func newTMDecoder(r io.ReadSeeker) (*tmDecoder, error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	in := &tmCounter{r: r}
	return &tmDecoder{dec: json.NewDecoder(in), in: in}, nil
}

func (d *tmDecoder) token() (json.Token, error) {
	d.in.left = maxTMValue
	return d.dec.Token()
}

// delim reads the delimiter want.
func (d *tmDecoder) delim(want json.Delim) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	if t != want {
		return errTMShape
	}
	return nil
}

// key reads an object's key.
func (d *tmDecoder) key() (string, error) {
	t, err := d.token()
	if err != nil {
		return "", err
	}
	k, ok := t.(string)
	if !ok {
		return "", errTMShape
	}
	return k, nil
}

// seekKey reads the current object's keys up to k, skipping the values of
// the others; errTMNoKey when the object has none.
func (d *tmDecoder) seekKey(k string) error {
	for d.dec.More() {
		got, err := d.key()
		if err != nil {
			return err
		}
		if got == k {
			return nil
		}
		if err := d.skip(); err != nil {
			return err
		}
	}
	return errTMNoKey
}

// skip reads one value and keeps nothing of it: an object key by key, an
// array one bounded element at a time.
func (d *tmDecoder) skip() error {
	t, err := d.token()
	if err != nil {
		return err
	}
	return d.skipFrom(t)
}

// skipFrom reads the rest of the value whose first token was t.
func (d *tmDecoder) skipFrom(t json.Token) error {
	switch t {
	case json.Delim('{'):
		for d.dec.More() {
			if _, err := d.key(); err != nil {
				return err
			}
			if err := d.skip(); err != nil {
				return err
			}
		}
		return d.delim('}')
	case json.Delim('['):
		for d.dec.More() {
			if _, _, err := d.value(); err != nil {
				return err
			}
		}
		return d.delim(']')
	}
	return nil
}

// tmIDs is what tagIDs reads of a task: its id and its subtasks' ids.
type tmIDs struct {
	ID       json.RawMessage `json:"id"`
	Subtasks []struct {
		ID json.RawMessage `json:"id"`
	} `json:"subtasks"`
}

// tagIDs reads a tag's value and tells add the id of each of its tasks and
// subtasks ("5", "5.2"), one top-level task at a time; list is false when
// the value is no object holding a "tasks" array. A task whose id is not
// one is passed over: reading the tag's tasks refuses it, naming its line.
func (d *tmDecoder) tagIDs(add func(id string)) (list bool, err error) {
	t, err := d.token()
	if err != nil {
		return false, err
	}
	if t != json.Delim('{') {
		return false, d.skipFrom(t)
	}
	for d.dec.More() {
		k, err := d.key()
		if err != nil {
			return false, err
		}
		if k != "tasks" || list {
			if err := d.skip(); err != nil {
				return false, err
			}
			continue
		}
		t, err := d.token()
		if err != nil {
			return false, err
		}
		if t != json.Delim('[') {
			if err := d.skipFrom(t); err != nil {
				return false, err
			}
			continue
		}
		list = true
		for d.dec.More() {
			raw, _, err := d.value()
			if err != nil {
				return false, err
			}
			var task tmIDs
			if json.Unmarshal(raw, &task) != nil {
				continue
			}
			id, ok := tmIDText(task.ID)
			if !ok {
				continue
			}
			add(id)
			for _, sub := range task.Subtasks {
				if s, ok := tmIDText(sub.ID); ok {
					add(id + "." + s)
				}
			}
		}
		if err := d.delim(']'); err != nil {
			return false, err
		}
	}
	return list, d.delim('}')
}

// value reads the next value whole (at most maxTMValue bytes) and says on
// which line it starts.
func (d *tmDecoder) value() (json.RawMessage, int, error) {
	d.in.left = maxTMValue
	var raw json.RawMessage
	if err := d.dec.Decode(&raw); err != nil {
		return nil, d.line(), err
	}
	return raw, d.line() - bytes.Count(raw, newline), nil
}

// end checks that nothing but space follows the top-level value.
func (d *tmDecoder) end() error {
	if _, err := d.token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: the file holds more than one JSON value", errTMShape)
	}
	return nil
}

// line is the line the decoder has read up to: the newlines handed to it
// less those it holds unread, plus one.
func (d *tmDecoder) line() int {
	n, _ := io.Copy(io.Discard, &newlineCounter{r: d.dec.Buffered()})
	return d.in.lines - int(n) + 1
}

// newlineCounter reads r and reports its newlines as the bytes read.
type newlineCounter struct{ r io.Reader }

func (c *newlineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	return bytes.Count(p[:n], newline), err
}

// refuse types a failure to read the file at w; shape explains what the
// file should be when it is not.
func (d *tmDecoder) refuse(w Where, err error, shape string) error {
	if w.Line == 0 {
		w.Line = d.line()
	}
	switch {
	case errors.Is(err, errTMTooLong):
		return Refuse(w, "", "maxLength", "a value of the file (a task with its subtasks, say) is longer than %d bytes; split the file", maxTMValue)
	case errors.Is(err, errTMShape) && shape != "":
		return Refuse(w, "", "format", "%s", shape)
	case errors.Is(err, errTMShape):
		return Refuse(w, "", "format", "%v; a task-master file is {\"tasks\":[…]} or {\"<tag>\":{\"tasks\":[…]}}", err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return Refuse(w, "", "format", "the file ends in the middle of its JSON")
	default:
		return jsonError(w, err)
	}
}
