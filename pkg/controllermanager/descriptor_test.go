package controllermanager

import (
	"slices"
	"testing"
)

func testRegistry() Registry {
	return Registry{
		"a-controller":   {Name: "a-controller", Aliases: []string{"a"}},
		"b-controller":   {Name: "b-controller", Aliases: []string{"b"}},
		"off-controller": {Name: "off-controller", Aliases: []string{"off"}, DisabledByDefault: true},
		"special":        {Name: "special", SpecialHandling: true},
	}
}

func TestControllersSelection(t *testing.T) {
	r := testRegistry()
	cases := []struct {
		selection []string
		want      []string
	}{
		{[]string{"*"}, []string{"a-controller", "b-controller"}},
		{[]string{"*", "off"}, []string{"a-controller", "b-controller", "off-controller"}},
		{[]string{"*", "-a"}, []string{"b-controller"}},
		{[]string{"-a-controller", "*"}, []string{"b-controller"}},
		{[]string{"a"}, []string{"a-controller"}},
		{[]string{"b", "-b"}, []string{"b-controller"}}, // the first explicit choice wins
		{[]string{"-b", "b", "*"}, []string{"a-controller"}},
		{[]string{}, nil},
		{[]string{"off-controller"}, []string{"off-controller"}},
	}
	for _, tc := range cases {
		if got := r.Selected(tc.selection); !slices.Equal(got, tc.want) {
			t.Errorf("--controllers=%v selects %v, want %v", tc.selection, got, tc.want)
		}
	}
}

func TestValidateSelection(t *testing.T) {
	r := testRegistry()
	for _, ok := range [][]string{{"*"}, {"a", "-b-controller", "off"}, {"-off"}} {
		if err := r.ValidateSelection(ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	for _, bad := range [][]string{{"nope"}, {"*", "-nope"}, {"-*"}} {
		if err := r.ValidateSelection(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}
