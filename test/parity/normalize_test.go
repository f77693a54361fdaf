package parity

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// obj parses a YAML object for tests.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

func objs(t *testing.T, ys ...string) []*unstructured.Unstructured {
	t.Helper()
	out := make([]*unstructured.Unstructured, len(ys))
	for i, y := range ys {
		out[i] = obj(t, y)
	}
	return out
}

func normalize(t *testing.T, n *Normalizer, c *Capture) string {
	t.Helper()
	if n == nil {
		n = &Normalizer{}
	}
	out, err := n.Normalize(c)
	if err != nil {
		t.Fatalf("Normalize: %v", err)
	}
	return out
}

// TestNormalizeObject checks each rule on single objects: the normalised
// text must contain every want line and none of the unwanted strings.
func TestNormalizeObject(t *testing.T) {
	tests := []struct {
		name    string
		known   map[string]string
		ignore  []string
		in      string
		want    []string
		notWant []string
	}{{
		name: "volatile metadata dropped",
		in: `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns, uid: 0f3c5a8e-1111-2222-3333-444455556666,
  resourceVersion: "42", creationTimestamp: "2026-01-02T03:04:05Z", generation: 3, selfLink: /x,
  managedFields: [{manager: kcm, operation: Update}]}}`,
		want:    []string{"--- # ConfigMap ns/a", "  name: a", "  generation: 3"},
		notWant: []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink", "42"},
	}, {
		name: "timestamps anywhere become <time>",
		in: `{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns, deletionTimestamp: "2026-01-02T03:04:05Z"},
  status: {conditions: [{type: Ready, lastTransitionTime: "2026-01-02T03:04:05.123456Z"}],
  message: "failed at 2026-01-02T03:04:05+02:00, retrying"}}`,
		want:    []string{"deletionTimestamp: <time>", "lastTransitionTime: <time>", "message: failed at <time>, retrying"},
		notWant: []string{"2026"},
	}, {
		name:    "IPs numbered in order of appearance, the same IP the same number",
		in:      `{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns}, status: {hostIP: 10.0.0.9, podIP: 10.244.1.7, podIPs: [{ip: 10.244.1.7}, {ip: "fd00::7"}]}}`,
		want:    []string{"hostIP: <ip-1>", "podIP: <ip-2>", "- ip: <ip-2>", "- ip: <ip-3>"},
		notWant: []string{"10.244", "fd00"},
	}, {
		name:    "a finished pod's IPs are dropped and take no number",
		in:      `{apiVersion: v1, kind: Pod, metadata: {name: a, namespace: ns}, status: {phase: Succeeded, hostIP: 10.0.0.9, podIP: 10.244.1.7, podIPs: [{ip: 10.244.1.7}]}}`,
		want:    []string{"hostIP: <ip-1>", "phase: Succeeded"},
		notWant: []string{"podIP", "<ip-2>"},
	}, {
		name: "CIDRs and non-IP strings are kept",
		in:   `{apiVersion: v1, kind: Node, metadata: {name: node1}, spec: {podCIDR: 10.244.1.0/24, providerID: "kwok://node1"}}`,
		want: []string{"podCIDR: 10.244.1.0/24", "providerID: kwok://node1", "--- # Node node1"},
	}, {
		name:    "known cluster values and other PEM blocks",
		known:   map[string]string{"-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----\n": "<cluster ca.crt>", "https://127.0.0.1:6443": "<apiserver-url>"},
		in:      "{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}, data: {ca.crt: \"-----BEGIN CERTIFICATE-----\\nAAA\\n-----END CERTIFICATE-----\\n\", other: \"-----BEGIN RSA PRIVATE KEY-----\\nBBB\\n-----END RSA PRIVATE KEY-----\\n\", url: \"server https://127.0.0.1:6443/api\"}}",
		want:    []string{"ca.crt: <cluster ca.crt>", "other: <pem RSA PRIVATE KEY>", "url: server <apiserver-url>/api"},
		notWant: []string{"AAA", "BBB"},
	}, {
		name:    "unknown uids anywhere become <uid>",
		in:      `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns, labels: {controller-uid: 0f3c5a8e-1111-2222-3333-444455556666}}, data: {holder: "host_0f3c5a8e-1111-2222-3333-444455556667"}}`,
		want:    []string{"controller-uid: <uid>", "holder: host_<uid>"},
		notWant: []string{"0f3c5a8e"},
	}, {
		name:    "ignore paths",
		ignore:  []string{"Pod:spec.nodeName", "*:metadata.annotations[example.com/stamp]", "Pod:status.conditions.message"},
		in:      `{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns, annotations: {example.com/stamp: x, keep: this}}, spec: {nodeName: n1}, status: {conditions: [{type: A, message: m1}, {type: B, message: m2}]}}`,
		want:    []string{"keep: this", "type: A", "type: B"},
		notWant: []string{"nodeName", "stamp", "m1", "m2"},
	}, {
		name:   "ignore of another kind does nothing",
		ignore: []string{"Node:spec.nodeName"},
		in:     `{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns}, spec: {nodeName: n1}}`,
		want:   []string{"nodeName: n1"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := normalize(t, &Normalizer{Known: tc.known, Ignore: tc.ignore}, &Capture{Objects: objs(t, tc.in)})
			for _, w := range tc.want {
				if !containsLine(got, w) {
					t.Errorf("missing line %q in:\n%s", w, got)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(got, nw) {
					t.Errorf("unwanted %q in:\n%s", nw, got)
				}
			}
		})
	}
}

// containsLine reports whether text has a line equal to want, ignoring
// indentation and a list item's "- ".
func containsLine(text, want string) bool {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimPrefix(strings.TrimSpace(l), "- ")
		if l == strings.TrimPrefix(strings.TrimSpace(want), "- ") {
			return true
		}
	}
	return false
}

// A ReplicaSet with three generated pods, the owner uid referenced from
// ownerReferences and a label.
const (
	rsYAML = `{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web-7d9f8c6b5, namespace: ns,
  uid: aaaaaaaa-0000-0000-0000-000000000001, creationTimestamp: "2026-01-01T00:00:00Z"}}`
	podTmpl = `{apiVersion: v1, kind: Pod, metadata: {name: NAME, generateName: web-7d9f8c6b5-, namespace: ns,
  uid: UID, creationTimestamp: "CREATED", labels: {batch.kubernetes.io/controller-uid: aaaaaaaa-0000-0000-0000-000000000001},
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-7d9f8c6b5, uid: aaaaaaaa-0000-0000-0000-000000000001, controller: true}]},
  spec: {nodeName: NODE}}`
)

func pod(t *testing.T, name, uid, created, node string) *unstructured.Unstructured {
	r := strings.NewReplacer("NAME", name, "UID", uid, "CREATED", created, "NODE", node)
	return obj(t, r.Replace(podTmpl))
}

func TestNormalizeGeneratedNames(t *testing.T) {
	rs := obj(t, rsYAML)
	// Created in the order xk2p9, bbbbb, zzzzz (second one ties with the
	// third on time; node names break the tie).
	p1 := pod(t, "web-7d9f8c6b5-xk2p9", "bbbbbbbb-0000-0000-0000-000000000001", "2026-01-01T00:00:01Z", "node-a")
	p2 := pod(t, "web-7d9f8c6b5-zzzzz", "bbbbbbbb-0000-0000-0000-000000000002", "2026-01-01T00:00:02Z", "node-b")
	p3 := pod(t, "web-7d9f8c6b5-bbbbb", "bbbbbbbb-0000-0000-0000-000000000003", "2026-01-01T00:00:02Z", "node-c")
	ev := obj(t, `{apiVersion: v1, kind: Event, metadata: {name: e1, namespace: ns},
  involvedObject: {kind: ReplicaSet, namespace: ns, name: web-7d9f8c6b5, uid: aaaaaaaa-0000-0000-0000-000000000001},
  source: {component: replicaset-controller}, type: Normal, reason: SuccessfulCreate,
  message: "Created pod: web-7d9f8c6b5-zzzzz", count: 1, firstTimestamp: "2026-01-01T00:00:02Z"}`)
	got := normalize(t, nil, &Capture{Objects: []*unstructured.Unstructured{p3, rs, p2, p1}, Events: []*unstructured.Unstructured{ev}, EventCounts: true})

	for _, w := range []string{
		"--- # Pod ns/web-7d9f8c6b5-<1>",
		"--- # Pod ns/web-7d9f8c6b5-<2>",
		"--- # Pod ns/web-7d9f8c6b5-<3>",
		"--- # ReplicaSet ns/web-7d9f8c6b5",
		"batch.kubernetes.io/controller-uid: <uid of ReplicaSet ns/web-7d9f8c6b5>",
		"message: 'Created pod: web-7d9f8c6b5-<2>'",
	} {
		if !containsLine(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	for _, nw := range []string{"xk2p9", "zzzzz", "bbbbb", "aaaaaaaa", "bbbbbbbb"} {
		if strings.Contains(got, nw) {
			t.Errorf("unwanted %q in:\n%s", nw, got)
		}
	}
	// Creation order decides the numbers; within a second, content does.
	sections := strings.Split(got, "--- # ")
	wantNodes := map[string]string{"<1>": "node-a", "<2>": "node-b", "<3>": "node-c"}
	for _, s := range sections {
		for n, node := range wantNodes {
			if strings.HasPrefix(s, "Pod ns/web-7d9f8c6b5-"+n) && !strings.Contains(s, "nodeName: "+node) {
				t.Errorf("pod %s should be the one on %s:\n%s", n, node, s)
			}
		}
	}

	// The same state with other random suffixes and uids, in another order,
	// normalises to the same text.
	rs2 := obj(t, strings.ReplaceAll(rsYAML, "aaaaaaaa-0000-0000-0000-000000000001", "cccccccc-0000-0000-0000-000000000001"))
	q := func(name, uid, created, node string) *unstructured.Unstructured {
		other := strings.ReplaceAll(podTmpl, "aaaaaaaa", "cccccccc")
		return obj(t, strings.NewReplacer("NAME", name, "UID", uid, "CREATED", created, "NODE", node).Replace(other))
	}
	evB := ev.DeepCopy()
	evB.Object["message"] = "Created pod: web-7d9f8c6b5-w2w2w"
	evB.Object["involvedObject"].(map[string]any)["uid"] = "cccccccc-0000-0000-0000-000000000001"
	got2 := normalize(t, nil, &Capture{
		Objects: []*unstructured.Unstructured{
			q("web-7d9f8c6b5-qqqqq", "dddddddd-0000-0000-0000-000000000001", "2026-01-01T00:00:01Z", "node-a"),
			q("web-7d9f8c6b5-2222k", "dddddddd-0000-0000-0000-000000000003", "2026-01-01T00:00:02Z", "node-c"),
			q("web-7d9f8c6b5-w2w2w", "dddddddd-0000-0000-0000-000000000002", "2026-01-01T00:00:02Z", "node-b"),
			rs2,
		},
		Events:      []*unstructured.Unstructured{evB},
		EventCounts: true,
	})
	if d := UnifiedDiff("first", "second", got, got2); d != "" {
		t.Errorf("equivalent captures differ:\n%s", d)
	}
}

func TestNormalizeOwnerReferences(t *testing.T) {
	owner := obj(t, `{apiVersion: batch/v1, kind: Job, metadata: {name: nightly-29480, generateName: nightly-, namespace: ns, uid: aaaaaaaa-0000-0000-0000-00000000000a, creationTimestamp: "2026-01-01T00:00:00Z"}}`)
	child := obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: nightly-29480-4x5z7, generateName: nightly-29480-, namespace: ns, creationTimestamp: "2026-01-01T00:00:01Z",
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: nightly-29480, uid: aaaaaaaa-0000-0000-0000-00000000000a, controller: true, blockOwnerDeletion: true},
                    {apiVersion: v1, kind: ConfigMap, name: gone, uid: aaaaaaaa-0000-0000-0000-00000000000b}]}}`)
	got := normalize(t, nil, &Capture{Objects: []*unstructured.Unstructured{child, owner}})
	for _, w := range []string{
		"--- # Job ns/nightly-<1>",
		// A name generated from a generated prefix nests the placeholders.
		"--- # Pod ns/nightly-<1>-<1>",
		"name: nightly-<1>",
		"name: gone",
		"controller: true",
		"blockOwnerDeletion: true",
	} {
		if !containsLine(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	if strings.Contains(got, "uid") {
		t.Errorf("ownerReferences keep a uid:\n%s", got)
	}
}

func TestNormalizeEvents(t *testing.T) {
	ev := func(name, reason, msg string, count int, extra string) *unstructured.Unstructured {
		return obj(t, `{apiVersion: v1, kind: Event, metadata: {name: `+name+`, namespace: ns},
  involvedObject: {kind: Pod, namespace: ns, name: web-7d9f8c6b5-xk2p9},
  source: {component: default-scheduler}, type: Normal, reason: `+reason+`,
  message: "`+msg+`", count: `+itoa(count)+`, firstTimestamp: "2026-01-01T00:00:01Z"`+extra+`}`)
	}
	events := []*unstructured.Unstructured{
		ev("e1", "Scheduled", "Successfully assigned ns/web-7d9f8c6b5-xk2p9 to kwok-node-0", 1, ""),
		ev("e2", "BackOff", "Back-off", 2, ""),
		ev("e3", "BackOff", "Back-off", 1, ""),
		// events.k8s.io Events: the series counts, the reporting controller is the source.
		ev("e4", "Killing", "Stopping", 0, `, reportingComponent: kubelet, series: {count: 4}`),
	}
	tests := []struct {
		name   string
		counts bool
		ignore []string
		want   string
	}{{
		name:   "counted",
		counts: true,
		want: `--- # Events
- count: 3
  message: Back-off
  object: Pod ns/web-7d9f8c6b5-<1>
  reason: BackOff
  source: default-scheduler
  type: Normal
- count: 4
  message: Stopping
  object: Pod ns/web-7d9f8c6b5-<1>
  reason: Killing
  source: kubelet
  type: Normal
- count: 1
  message: Successfully assigned ns/web-7d9f8c6b5-<1> to kwok-node-0
  object: Pod ns/web-7d9f8c6b5-<1>
  reason: Scheduled
  source: default-scheduler
  type: Normal
`,
	}, {
		name:   "uncounted, message ignored",
		ignore: []string{"Event:message"},
		want: `--- # Events
- object: Pod ns/web-7d9f8c6b5-<1>
  reason: BackOff
  source: default-scheduler
  type: Normal
- object: Pod ns/web-7d9f8c6b5-<1>
  reason: Killing
  source: kubelet
  type: Normal
- object: Pod ns/web-7d9f8c6b5-<1>
  reason: Scheduled
  source: default-scheduler
  type: Normal
`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := normalize(t, &Normalizer{Ignore: tc.ignore}, &Capture{Events: events, EventCounts: tc.counts})
			if d := UnifiedDiff("want", "got", tc.want, got); d != "" {
				t.Errorf("events:\n%s", d)
			}
		})
	}
}

func TestNormalizeNotes(t *testing.T) {
	got := normalize(t, nil, &Capture{Notes: []string{"step 2 failed:\ntimed out"}})
	want := "# note: step 2 failed:\n#   timed out\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseIgnore(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "Pod:spec.nodeName", want: []string{"spec", "nodeName"}},
		{in: "*:metadata.annotations[a.b/c].x", want: []string{"metadata", "annotations", "a.b/c", "x"}},
		{in: "Node:status.*", want: []string{"status", "*"}},
		{in: "Pod:[a.b][c]", want: []string{"a.b", "c"}},
		{in: "spec.nodeName", wantErr: true},
		{in: "Pod:", wantErr: true},
		{in: "Pod:a[b", wantErr: true},
		{in: "Pod:a[b]c", wantErr: true},
		{in: "Pod:a..b", want: []string{"a", "b"}},
	}
	for _, tc := range tests {
		p, err := parseIgnore(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && strings.Join(p.segs, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: segments %q, want %q", tc.in, p.segs, tc.want)
		}
	}
}

func itoa(n int) string {
	b, _ := yaml.Marshal(n)
	return strings.TrimSpace(string(b))
}

// TestNormalizeNamesOnlyInEvents: pods that no longer exist are known from
// Events only; their numbers must not depend on their random names.
func TestNormalizeNamesOnlyInEvents(t *testing.T) {
	ev := func(i int, involvedKind, involved, reason, msg, when string) *unstructured.Unstructured {
		return obj(t, `{apiVersion: v1, kind: Event, metadata: {name: e`+itoa(i)+`, namespace: ns},
  involvedObject: {kind: `+involvedKind+`, namespace: ns, name: `+involved+`},
  source: {component: c}, type: Normal, reason: `+reason+`, message: "`+msg+`", count: 1, firstTimestamp: "`+when+`"}`)
	}
	// a was created a second before b and c; c was also killed.
	events := func(a, b, c string) []*unstructured.Unstructured {
		return []*unstructured.Unstructured{
			ev(1, "ReplicaSet", "web-1", "SuccessfulCreate", "Created pod: "+a, "2026-01-01T00:00:01Z"),
			ev(2, "ReplicaSet", "web-1", "SuccessfulCreate", "Created pod: "+b, "2026-01-01T00:00:02Z"),
			ev(3, "ReplicaSet", "web-1", "SuccessfulCreate", "Created pod: "+c, "2026-01-01T00:00:02Z"),
			ev(4, "Pod", c, "Killing", "Stopping container app", "2026-01-01T00:00:03Z"),
			ev(5, "ReplicaSet", "web-1", "SuccessfulDelete", "Deleted pod: "+a, "2026-01-01T00:00:04Z"),
		}
	}
	first := normalize(t, nil, &Capture{Events: events("web-1-xxxxx", "web-1-bbbbb", "web-1-zzzzz"), EventCounts: true})
	second := normalize(t, nil, &Capture{Events: events("web-1-zzzzz", "web-1-xxxxx", "web-1-bbbbb"), EventCounts: true})
	if d := UnifiedDiff("first", "second", first, second); d != "" {
		t.Errorf("the same history with other random names differs:\n%s", d)
	}
	// a is <1> by time; c comes before b by what its Events say (Killing <
	// SuccessfulCreate).
	for _, w := range []string{"message: 'Created pod: web-1-<1>'", "message: 'Deleted pod: web-1-<1>'", "object: Pod ns/web-1-<2>"} {
		if !containsLine(first, w) {
			t.Errorf("missing %q in:\n%s", w, first)
		}
	}
}

func TestNormalizeAPIAccessVolume(t *testing.T) {
	got := normalize(t, nil, &Capture{Objects: objs(t, `{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns},
  spec: {volumes: [{name: kube-api-access-86jdr}], containers: [{name: app, volumeMounts: [{name: kube-api-access-86jdr}]}]}}`)})
	if strings.Contains(got, "86jdr") || strings.Count(got, "kube-api-access-<random>") != 2 {
		t.Errorf("api access volume not normalised:\n%s", got)
	}
}

func TestNormalizeTaintOrder(t *testing.T) {
	a := normalize(t, nil, &Capture{Objects: objs(t, `{apiVersion: v1, kind: Node, metadata: {name: n},
  spec: {taints: [{key: node.kubernetes.io/unreachable, effect: NoSchedule}, {key: node.kubernetes.io/unreachable, effect: NoExecute}]}}`)})
	b := normalize(t, nil, &Capture{Objects: objs(t, `{apiVersion: v1, kind: Node, metadata: {name: n},
  spec: {taints: [{key: node.kubernetes.io/unreachable, effect: NoExecute}, {key: node.kubernetes.io/unreachable, effect: NoSchedule}]}}`)})
	if a != b {
		t.Errorf("taint order still shows:\n%s\n---\n%s", a, b)
	}
	if !strings.Contains(a, "effect: NoExecute") || !strings.Contains(a, "effect: NoSchedule") {
		t.Errorf("taints lost:\n%s", a)
	}
}
