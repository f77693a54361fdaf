package selinuxwarning

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

const (
	mountOption = v1.SELinuxChangePolicyMountOption
	recursive   = v1.SELinuxChangePolicyRecursive
)

func ref(ns, name string) cache.ObjectName { return cache.ObjectName{Namespace: ns, Name: name} }

func sortConflicts(cs []conflict) []conflict {
	slices.SortFunc(cs, func(a, b conflict) int {
		return strings.Compare(a.Property+a.Pod.String()+a.OtherPod.String(), b.Property+b.Pod.String()+b.OtherPod.String())
	})
	return cs
}

func TestLabelsConflict(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"", "", false},
		{"system_u:object_r:container_t:s0:c1,c2", "system_u:object_r:container_t:s0:c1,c2", false},
		{"system_u:object_r:container_t:s0:c1,c2", "system_u:object_r:container_t:s0:c1,c3", true},
		// Empty user, role or type: the node's default, unknown here.
		{":::s0:c1,c2", "system_u:object_r:container_t:s0:c1,c2", false},
		{"system_u::container_t:s0", "other_u:object_r::s0", true},
		{"system_u::container_t:s0", ":object_r:other_t:s0", true},
		// The level must always match, also against an empty one.
		{"", ":::s0:c1", true},
		{"system_u:object_r:container_t", "system_u:object_r:container_t:s0", true},
	} {
		if got := labelsConflict(labelParts(tc.a), labelParts(tc.b)); got != tc.want {
			t.Errorf("labelsConflict(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := labelsConflict(labelParts(tc.b), labelParts(tc.a)); got != tc.want {
			t.Errorf("labelsConflict(%q, %q) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestConflictMessage(t *testing.T) {
	same := conflict{Property: propertyLabel, Pod: ref("ns", "a"), Value: "::: s0:c1", OtherPod: ref("ns", "b"), OtherValue: ":::s0:c2"}
	if got, want := same.message(), `SELinuxLabel "::: s0:c1" conflicts with pod b that uses the same volume as this pod with SELinuxLabel ":::s0:c2". If both pods land on the same node, only one of them may access the volume.`; got != want {
		t.Errorf("same namespace:\n got %s\nwant %s", got, want)
	}
	other := conflict{Property: propertyPolicy, Pod: ref("ns1", "a"), Value: "Recursive", OtherPod: ref("ns2", "b"), OtherValue: "MountOption"}
	if got, want := other.message(), `SELinuxChangePolicy"Recursive" conflicts with another pod that uses the same volume as this pod with a different SELinuxChangePolicy. If both pods land on the same node, only one of them may access the volume.`; got != want {
		t.Errorf("other namespace:\n got %s\nwant %s", got, want)
	}
	if same.reason() != "SELinuxLabelConflict" || other.reason() != "SELinuxChangePolicyConflict" {
		t.Errorf("reasons %s %s", same.reason(), other.reason())
	}
}

func TestCacheAdd(t *testing.T) {
	type use struct {
		pod    cache.ObjectName
		vol    v1.UniqueVolumeName
		label  string
		policy v1.PodSELinuxChangePolicy
	}
	a, b, c := ref("ns", "a"), ref("ns", "b"), ref("other", "c")
	for _, tc := range []struct {
		name    string
		initial []use
		add     use
		want    []conflict // one direction; the other is implied
	}{
		{name: "first use", add: use{a, "v", ":::s0:c1", mountOption}},
		{
			name:    "same label and policy",
			initial: []use{{b, "v", ":::s0:c1", mountOption}},
			add:     use{a, "v", ":::s0:c1", mountOption},
		},
		{
			name:    "other volume",
			initial: []use{{b, "w", ":::s0:c2", mountOption}},
			add:     use{a, "v", ":::s0:c1", mountOption},
		},
		{
			name:    "label",
			initial: []use{{b, "v", ":::s0:c2", mountOption}},
			add:     use{a, "v", ":::s0:c1", mountOption},
			want:    []conflict{{propertyLabel, a, ":::s0:c1", b, ":::s0:c2"}},
		},
		{
			name:    "policy and label: a Recursive pod mounts with no label",
			initial: []use{{b, "v", ":::s0:c2", mountOption}},
			add:     use{a, "v", "", recursive},
			want: []conflict{
				{propertyPolicy, a, "Recursive", b, "MountOption"},
				{propertyLabel, a, "", b, ":::s0:c2"},
			},
		},
		{
			name:    "both Recursive",
			initial: []use{{b, "v", "", recursive}},
			add:     use{a, "v", "", recursive},
		},
		{
			name:    "several pods, other namespace",
			initial: []use{{b, "v", ":::s0:c2", mountOption}, {c, "v", ":::s0:c1", mountOption}},
			add:     use{a, "v", ":::s0:c1", mountOption},
			want:    []conflict{{propertyLabel, a, ":::s0:c1", b, ":::s0:c2"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vc := newVolumeCache()
			var initial []conflict
			for _, u := range tc.initial {
				initial = append(initial, vc.add(u.vol, u.pod, u.label, u.policy, "d")...)
			}
			got := sortConflicts(vc.add(tc.add.vol, tc.add.pod, tc.add.label, tc.add.policy, "d"))
			var want []conflict
			for _, k := range tc.want {
				want = append(want, k, conflict{k.Property, k.OtherPod, k.OtherValue, k.Pod, k.Value})
			}
			sortConflicts(want)
			if !slices.Equal(got, want) {
				t.Errorf("add returned\n%+v\nwant\n%+v", got, want)
			}
			all := sortConflicts(vc.conflicts())
			want = sortConflicts(append(want, initial...))
			if !slices.Equal(all, want) {
				t.Errorf("conflicts()\n%+v\nwant\n%+v", all, want)
			}
			// Adding the same use again reports nothing new.
			if again := vc.add(tc.add.vol, tc.add.pod, tc.add.label, tc.add.policy, "d"); len(again) != 0 {
				t.Errorf("second add reported %+v", again)
			}
		})
	}
}

func TestCacheUpdateAndDelete(t *testing.T) {
	a, b, c, d := ref("ns", "a"), ref("ns", "b"), ref("ns", "c"), ref("ns", "d")
	vc := newVolumeCache()
	vc.add("v1", a, ":::s0:c1", mountOption, "drv")
	vc.add("v1", b, ":::s0:c2", mountOption, "drv")
	vc.add("v2", c, ":::s0:c3", mountOption, "other")
	vc.add("v2", d, ":::s0:c4", mountOption, "other")
	vc.add("v3", a, ":::s0:c1", mountOption, "")
	vc.add("v3", b, ":::s0:c2", mountOption, "")
	// a and b conflict on v1 and v3 in the same way: reported once.
	if n := len(vc.conflicts()); n != 4 {
		t.Fatalf("%d conflicts, want 4: %+v", n, vc.conflicts())
	}

	// The CSI driver changed: a is now Recursive on v1. Its old conflict
	// on v1 is replaced.
	got := vc.add("v1", a, "", recursive, "drv")
	if len(got) != 4 {
		t.Errorf("update reported %+v", got)
	}
	// v1: policy and label, both ways; v2: c and d; v3: a and b as before.
	all := vc.conflicts()
	if n := len(all); n != 2+2+4 {
		t.Errorf("%d conflicts after the update, want 8: %+v", n, all)
	}

	pods := vc.podsUsingDriver("drv")
	slices.SortFunc(pods, func(x, y cache.ObjectName) int { return strings.Compare(x.String(), y.String()) })
	if !slices.Equal(pods, []cache.ObjectName{a, b}) {
		t.Errorf("podsUsingDriver(drv) = %v", pods)
	}
	if pods := vc.podsUsingDriver("none"); len(pods) != 0 {
		t.Errorf("podsUsingDriver(none) = %v", pods)
	}

	vc.deletePod(a)
	vc.deletePod(a)
	all = sortConflicts(vc.conflicts())
	want := sortConflicts([]conflict{
		{propertyLabel, c, ":::s0:c3", d, ":::s0:c4"},
		{propertyLabel, d, ":::s0:c4", c, ":::s0:c3"},
	})
	if !slices.Equal(all, want) {
		t.Errorf("after deleting a: %+v", all)
	}
	if _, ok := vc.byPod[a]; ok {
		t.Error("a is still indexed")
	}
	vc.deletePod(b)
	if _, ok := vc.volumes["v1"]; ok {
		t.Error("v1 is kept without pods")
	}
	// A pod re-added after its conflicting peer left gets no conflict.
	if got := vc.add("v1", b, ":::s0:c2", mountOption, "drv"); len(got) != 0 {
		t.Errorf("re-add reported %+v", got)
	}
}
