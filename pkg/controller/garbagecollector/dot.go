package garbagecollector

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// vertex is one node of the DOT graph (upstream's dotVertex).
type vertex struct {
	uid                                             types.UID
	gvk                                             schema.GroupVersionKind
	namespace, name                                 string
	missing, beingDeleted, deletingDependents, virt bool
}

func vertexOf(n *node) *vertex {
	gv, _ := schema.ParseGroupVersion(n.identity.APIVersion)
	return &vertex{uid: n.identity.UID, gvk: gv.WithKind(n.identity.Kind), namespace: n.identity.Namespace,
		name: n.identity.Name, beingDeleted: n.beingDeleted, deletingDependents: n.deletingDependents, virt: n.virtual}
}

func missingVertex(ref metav1.OwnerReference) *vertex {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return &vertex{uid: ref.UID, gvk: gv.WithKind(ref.Kind), name: ref.Name, missing: true}
}

func (v *vertex) writeDOT(w io.Writer) {
	kind := v.gvk.Kind + "." + v.gvk.Version
	if v.gvk.Group != "" {
		kind += "." + v.gvk.Group
	}
	label := fmt.Sprintf("uid=%v\nnamespace=%v\n%v/%v\n", v.uid, v.namespace, kind, v.name)
	var conds []string
	for _, c := range []struct {
		on   bool
		name string
	}{{v.beingDeleted, "beingDeleted"}, {v.deletingDependents, "deletingDependents"}, {v.virt, "virtual"}, {v.missing, "missingFromGraph"}} {
		if c.on {
			conds = append(conds, c.name)
		}
	}
	if len(conds) > 0 {
		label += strings.Join(conds, ",") + "\n"
	}
	fmt.Fprintf(w, "  %q [\n", v.uid)
	for _, a := range [][2]string{
		{"label", label}, {"group", v.gvk.Group}, {"version", v.gvk.Version}, {"kind", v.gvk.Kind},
		{"namespace", v.namespace}, {"name", v.name}, {"uid", string(v.uid)},
		{"missing", fmt.Sprint(v.missing)}, {"beingDeleted", fmt.Sprint(v.beingDeleted)},
		{"deletingDependents", fmt.Sprint(v.deletingDependents)}, {"virtual", fmt.Sprint(v.virt)},
	} {
		fmt.Fprintf(w, "    %s=%q\n", a[0], a[1])
	}
	fmt.Fprintf(w, "  ];\n")
}

type edge struct{ from, to types.UID }

// toDOT returns the vertices and dependent→owner edges of nodes; nodes
// without owners or dependents are left out.
func toDOT(nodes map[types.UID]*node) ([]*vertex, []edge) {
	var vs []*vertex
	var es []edge
	byUID := map[types.UID]*vertex{}
	for _, n := range nodes {
		if len(n.dependents) == 0 && len(n.owners) == 0 {
			continue
		}
		v := vertexOf(n)
		byUID[n.identity.UID] = v
		vs = append(vs, v)
	}
	for _, n := range nodes {
		for _, ref := range n.owners {
			if _, ok := byUID[ref.UID]; !ok {
				v := missingVertex(ref)
				byUID[ref.UID] = v
				vs = append(vs, v)
			}
			es = append(es, edge{from: n.identity.UID, to: ref.UID})
		}
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].uid < vs[j].uid })
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].from != es[j].from {
			return es[i].from < es[j].from
		}
		return es[i].to < es[j].to
	})
	return vs, es
}

// reachable returns the nodes connected to uids through owners and
// dependents.
func reachable(nodes map[types.UID]*node, uids []types.UID) map[types.UID]*node {
	out := map[types.UID]*node{}
	for len(uids) > 0 {
		uid := uids[0]
		uids = uids[1:]
		n, ok := nodes[uid]
		if _, seen := out[uid]; seen || !ok {
			continue
		}
		out[uid] = n
		for _, ref := range n.owners {
			uids = append(uids, ref.UID)
		}
		for d := range n.dependents {
			uids = append(uids, d.identity.UID)
		}
	}
	return out
}

func writeDOT(w io.Writer, vs []*vertex, es []edge) {
	io.WriteString(w, "strict digraph full {\n")
	if len(vs) > 0 {
		io.WriteString(w, "  // Node definitions.\n")
		for _, v := range vs {
			v.writeDOT(w)
		}
	}
	if len(es) > 0 {
		io.WriteString(w, "  // Edge definitions.\n")
		for _, e := range es {
			fmt.Fprintf(w, "  %q -> %q;\n", e.from, e.to)
		}
	}
	io.WriteString(w, "}\n")
}

// debugHandler serves /graph, optionally restricted to ?uid=… and their
// connected nodes, as upstream does.
type debugHandler struct{ graph *graph }

func (h debugHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/graph" {
		http.Error(w, "", http.StatusNotFound)
		return
	}
	var b bytes.Buffer
	h.graph.mu.RLock()
	nodes := h.graph.nodes
	if q := req.URL.Query()["uid"]; len(q) > 0 {
		uids := make([]types.UID, 0, len(q))
		for _, u := range q {
			uids = append(uids, types.UID(u))
		}
		nodes = reachable(nodes, uids)
	}
	vs, es := toDOT(nodes)
	h.graph.mu.RUnlock()
	writeDOT(&b, vs, es)
	w.Header().Set("Content-Type", "text/vnd.graphviz")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b.Bytes())
}
