package schema

import (
	"encoding/json"
	"reflect"
	"testing"
)

type tagged struct {
	Project string   `json:"project" pattern:"^[a-z0-9][a-z0-9-]{0,62}$" description:"Project slug, registered first."`
	IDs     []string `json:"ids,omitempty" jsonschema:"maxItems=5" pattern:"^T-[1-9][0-9]*$"`
	Inner   *struct {
		Code string `json:"code" pattern:"^[A-Z]{2,3}$"`
	} `json:"inner,omitempty"`
	Plain string `json:"plain,omitempty" jsonschema:"maxLength=4"`
}

func TestTagsCarryPatternsAndDescriptionsWithCommas(t *testing.T) {
	t.Parallel()
	var s map[string]any
	if err := json.Unmarshal(For[tagged](), &s); err != nil {
		t.Fatal(err)
	}
	props := s["properties"].(map[string]any)
	got := func(path ...string) any {
		var v any = props
		for _, k := range path {
			v = v.(map[string]any)[k]
		}
		return v
	}
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"project", "pattern"}, "^[a-z0-9][a-z0-9-]{0,62}$"},
		{[]string{"project", "description"}, "Project slug, registered first."},
		{[]string{"ids", "items", "pattern"}, "^T-[1-9][0-9]*$"},
		{[]string{"ids", "maxItems"}, float64(5)},
		{[]string{"inner", "properties", "code", "pattern"}, "^[A-Z]{2,3}$"},
		{[]string{"plain", "maxLength"}, float64(4)},
	} {
		if v := got(c.path...); !reflect.DeepEqual(v, c.want) {
			t.Errorf("%v = %v, want %v", c.path, v, c.want)
		}
	}
	v := MustCompile(For[tagged]())
	for doc, field := range map[string]string{
		`{"project":"web"}`:                           "",
		`{"project":"Web"}`:                           "project",
		`{"project":"web","ids":["T-1","x"]}`:         "ids[1]",
		`{"project":"web","inner":{"code":"ABCD"}}`:   "inner.code",
		`{"project":"web","ids":["T-1","T-2","T-3"]}`: "",
	} {
		e := v.Validate([]byte(doc))
		switch {
		case field == "" && e != nil:
			t.Errorf("%s refused: %v", doc, e)
		case field != "" && (e == nil || e.Details["field"] != field):
			t.Errorf("%s: got %v, want a refusal naming %s", doc, e, field)
		}
	}
}

type amended struct {
	Phase string `json:"phase"`
}

func (amended) AmendSchema(s map[string]any) {
	props := s["properties"].(map[string]any)
	props["phase"] = map[string]any{"anyOf": []any{
		map[string]any{"type": "string", "minLength": 1},
		map[string]any{"type": "number"},
	}}
}

func TestAmenderChangesTheDerivedSchema(t *testing.T) {
	t.Parallel()
	v := MustCompile(For[amended]())
	for doc, ok := range map[string]bool{`{"phase":"2"}`: true, `{"phase":2}`: true, `{"phase":""}`: false, `{"phase":true}`: false} {
		if e := v.Validate([]byte(doc)); (e == nil) != ok {
			t.Errorf("%s: valid=%v, want %v (%v)", doc, e == nil, ok, e)
		}
	}
}
