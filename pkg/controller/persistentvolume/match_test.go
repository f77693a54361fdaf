package persistentvolume

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestFindBestMatch(t *testing.T) {
	rwo, rox, rwx := v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany
	tests := []struct {
		name    string
		volumes []*v1.PersistentVolume
		claim   *v1.PersistentVolumeClaim
		delay   bool
		want    string
	}{
		{"smallest that fits", []*v1.PersistentVolume{newPV("a", "10Gi"), newPV("b", "1Gi"), newPV("c", "5Gi"), newPV("d", "3Gi")},
			newPVC("c1", "2Gi"), false, "d"},
		{"exact size", []*v1.PersistentVolume{newPV("a", "10Gi"), newPV("b", "2Gi")}, newPVC("c1", "2Gi"), false, "b"},
		{"none big enough", []*v1.PersistentVolume{newPV("a", "1Gi")}, newPVC("c1", "2Gi"), false, ""},
		{"1 EiB fits nothing", []*v1.PersistentVolume{newPV("a", "100Ti")}, newPVC("c1", "1Ei"), false, ""},
		{"fewest access modes first, even if larger", []*v1.PersistentVolume{
			newPV("wide", "1Gi", withModes(rwo, rox, rwx)), newPV("narrow", "10Gi", withModes(rwo))},
			newPVC("c1", "1Gi"), false, "narrow"},
		{"a mode the claim needs", []*v1.PersistentVolume{newPV("rwo", "1Gi"), newPV("rwx", "5Gi", withModes(rwo, rwx))},
			newPVC("c1", "1Gi", claimModes(rwx)), false, "rwx"},
		{"class must match", []*v1.PersistentVolume{newPV("a", "1Gi", withClass("gold")), newPV("b", "5Gi")},
			newPVC("c1", "1Gi", claimClass(strPtr("gold"))), false, "a"},
		{"no class claim skips classed volumes", []*v1.PersistentVolume{newPV("a", "1Gi", withClass("gold"))},
			newPVC("c1", "1Gi"), false, ""},
		{"selector", []*v1.PersistentVolume{newPV("a", "1Gi"), newPV("b", "5Gi", withLabels(map[string]string{"tier": "db"}))},
			newPVC("c1", "1Gi", claimSelector(map[string]string{"tier": "db"})), false, "b"},
		{"volume mode", []*v1.PersistentVolume{newPV("fs", "1Gi"), newPV("block", "5Gi", withBlock())},
			newPVC("c1", "1Gi", claimBlock()), false, "block"},
		{"VolumeAttributesClass", []*v1.PersistentVolume{newPV("plain", "1Gi"), newPV("fast", "5Gi", withVAC("fast"))},
			newPVC("c1", "1Gi", claimVAC("fast")), false, "fast"},
		{"volume with a VAC not for a claim without", []*v1.PersistentVolume{newPV("fast", "5Gi", withVAC("fast"))},
			newPVC("c1", "1Gi"), false, ""},
		{"only Available volumes", []*v1.PersistentVolume{newPV("a", "1Gi", withPhase(v1.VolumePending)), newPV("b", "5Gi", withPhase(v1.VolumeReleased))},
			newPVC("c1", "1Gi"), false, ""},
		{"volume bound elsewhere", []*v1.PersistentVolume{newPV("a", "1Gi", withClaimRef("other", "uid-other"))},
			newPVC("c1", "1Gi"), false, ""},
		{"pre-bound volume wins over a smaller one", []*v1.PersistentVolume{newPV("small", "1Gi"), newPV("mine", "9Gi", withClaimRef("c1", ""))},
			newPVC("c1", "1Gi"), false, "mine"},
		{"delay binding: unbound volumes left to the scheduler", []*v1.PersistentVolume{newPV("a", "1Gi")},
			newPVC("c1", "1Gi"), true, ""},
		{"delay binding: pre-bound still matched", []*v1.PersistentVolume{newPV("a", "1Gi", withClaimRef("c1", ""))},
			newPVC("c1", "1Gi"), true, "a"},
		{"equal sizes: by name", []*v1.PersistentVolume{newPV("z", "1Gi"), newPV("m", "1Gi"), newPV("q", "1Gi")},
			newPVC("c1", "1Gi"), false, "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := newVolumeIndex()
			for _, pv := range tt.volumes {
				if err := idx.store.Add(pv); err != nil {
					t.Fatal(err)
				}
			}
			got, err := idx.findBestMatch(tt.claim, tt.delay, true)
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tt.want {
				t.Errorf("matched %q, want %q", name, tt.want)
			}
		})
	}
}

func TestAccessModesString(t *testing.T) {
	modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod, v1.ReadWriteMany, v1.ReadWriteOnce}
	if got := accessModesString(modes); got != "RWO,RWX,RWOP" {
		t.Errorf("got %q", got)
	}
	if got := accessModesFromString("RWO,RWX,RWOP"); len(got) != 3 || got[0] != v1.ReadWriteOnce || got[2] != v1.ReadWriteOncePod {
		t.Errorf("got %v", got)
	}
}

func TestCheckVolumeSatisfyClaim(t *testing.T) {
	tests := []struct {
		pv    *v1.PersistentVolume
		claim *v1.PersistentVolumeClaim
		want  string
	}{
		{newPV("a", "1Gi"), newPVC("c", "2Gi"), "requested PV is too small"},
		{newPV("a", "5Gi", withClass("x")), newPVC("c", "2Gi"), "storageClassName does not match"},
		{newPV("a", "5Gi"), newPVC("c", "2Gi", claimBlock()), "incompatible volumeMode"},
		{newPV("a", "5Gi"), newPVC("c", "2Gi", claimModes(v1.ReadWriteMany)), "incompatible accessMode"},
		{newPV("a", "5Gi", withVAC("v")), newPVC("c", "2Gi"), "volumeAttributesClassName does not match"},
		{newPV("a", "5Gi"), newPVC("c", "2Gi"), ""},
	}
	for _, tt := range tests {
		err := checkVolumeSatisfyClaim(tt.pv, tt.claim, true)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func strPtr(s string) *string { return &s }
