package rawjson_test

import (
	"fmt"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// Check runs on a call's arguments before they are decoded: it names the
// value whose bytes encoding/json would silently replace.
func ExampleCheck() {
	fmt.Println(rawjson.Check([]byte(`{"title":"ok","tags":["a","b"]}`), 0))

	e := rawjson.Check([]byte(`{"tags":["a","\ud800"]}`), 0)
	fmt.Println(e.Details["field"], e.Details["constraint"])

	deep := strings.Repeat("[", 5) + strings.Repeat("]", 5)
	e = rawjson.Check([]byte(deep), 4)
	fmt.Println(e.Details["constraint"])
	// Output:
	// <nil>
	// tags[1] utf8
	// max_depth
}

// A Scanner reads one member of a large, already valid request without
// decoding the rest of it.
func ExampleScanner() {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"task_create","arguments":{"title":"a"}}}`)
	ps, pe, ok := (&rawjson.Scanner{B: msg}).Member("params")
	if !ok {
		fmt.Println("decode the whole message instead")
		return
	}
	ns, ne, _ := (&rawjson.Scanner{B: msg[:pe], I: ps}).Member("name")
	name, _ := rawjson.PlainString(msg[ns:ne])
	fmt.Println(name)
	// Output: task_create
}

// Member gives up, rather than guess, when a key is repeated or could be
// matched in another case by encoding/json.
func ExampleScanner_Member() {
	for _, doc := range []string{
		`{"a": 1, "name": "x"}`,
		`{"name": "x", "name": "y"}`,
		`{"Name": "x"}`,
		`["not", "an", "object"]`,
	} {
		s, e, ok := (&rawjson.Scanner{B: []byte(doc)}).Member("name")
		fmt.Printf("%q %v\n", doc[s:e], ok)
	}
	// Output:
	// "\"x\"" true
	// "" false
	// "" false
	// "" false
}

// Members finds several keys in one pass.
func ExampleScanner_Members() {
	doc := []byte(`{"name":"task_create","arguments":{"title":"a"},"_meta":{}}`)
	keys := []string{"name", "arguments", "task"}
	spans := make([][2]int, len(keys))
	if (&rawjson.Scanner{B: doc}).Members(keys, spans) {
		for i, k := range keys {
			fmt.Printf("%s=%s\n", k, doc[spans[i][0]:spans[i][1]])
		}
	}
	// Output:
	// name="task_create"
	// arguments={"title":"a"}
	// task=
}

// Skip moves past a whole value; Space past the whitespace after it.
func ExampleScanner_Skip() {
	s := rawjson.Scanner{B: []byte(`[{"a":[1,2]} , "b\"c" ,3]`), I: 1}
	for s.I < len(s.B) && s.B[s.I] != ']' {
		start := s.I
		s.Skip()
		fmt.Println(string(s.B[start:s.I]))
		s.Space()
		s.I++ // the comma or the closing bracket
		s.Space()
	}
	// Output:
	// {"a":[1,2]}
	// "b\"c"
	// 3
}

func ExampleScanner_Space() {
	s := rawjson.Scanner{B: []byte(" \n\t true")}
	s.Space()
	fmt.Println(s.I, string(s.B[s.I:]))
	// Output: 4 true
}

// SkipString moves past a string, escapes included, as when measuring
// how long a value is.
func ExampleScanner_SkipString() {
	s := rawjson.Scanner{B: []byte(`"say \"hi\"", 1`)}
	s.SkipString()
	fmt.Println(s.I, string(s.B[:s.I]))
	// Output: 12 "say \"hi\""
}

// PlainString reads a string value without a decoder when nothing in it
// needs decoding.
func ExamplePlainString() {
	fmt.Println(rawjson.PlainString([]byte(`"task_create"`)))
	fmt.Println(rawjson.PlainString([]byte(`"tab\there"`)))
	fmt.Println(rawjson.PlainString([]byte(`42`)))
	// Output:
	// task_create true
	//  false
	//  false
}
