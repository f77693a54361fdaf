package parity

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestSubstituteUIDs(t *testing.T) {
	uids := map[string]types.UID{"Pod/ns/pod3": "u-3", "Node//n1": "u-n"}
	lookup := func(kind, namespace, name string) (types.UID, error) {
		if u, ok := uids[kind+"/"+namespace+"/"+name]; ok {
			return u, nil
		}
		return "", errors.New("not found")
	}
	for _, tc := range []struct {
		in, want string
		wantErr  bool
	}{
		{in: `{"uid":"{{uid Pod ns/pod3}}","name":"pod3"}`, want: `{"uid":"u-3","name":"pod3"}`},
		{in: `["{{uid Node n1}}","{{uid Pod ns/pod3}}"]`, want: `["u-n","u-3"]`},
		{in: `{"uid":"{{uid Pod ns/missing}}"}`, wantErr: true},
		{in: `{"a":"{{uid}}"}`, want: `{"a":"{{uid}}"}`},
	} {
		got, err := substituteUIDs([]byte(tc.in), lookup)
		if (err != nil) != tc.wantErr || (!tc.wantErr && string(got) != tc.want) {
			t.Errorf("substituteUIDs(%s) = %s, %v; want %s (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
