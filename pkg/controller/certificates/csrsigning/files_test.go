package csrsigning

import (
	"slices"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	kcmv1alpha1 "k8s.io/kube-controller-manager/config/v1alpha1"
)

var zeroTime time.Time

func TestSelectFiles(t *testing.T) {
	pair := func(c, k string) kcmv1alpha1.CSRSigningConfiguration {
		return kcmv1alpha1.CSRSigningConfiguration{CertFile: c, KeyFile: k}
	}
	tests := []struct {
		name    string
		cfg     kcmv1alpha1.CSRSigningControllerConfiguration
		want    []signerFiles
		skipped []string
		wantErr bool
	}{
		{name: "nothing set: not started"},
		{name: "cluster cert without key: not started", cfg: kcmv1alpha1.CSRSigningControllerConfiguration{ClusterSigningCertFile: "c"}},
		{name: "cluster pair: all four signers", cfg: kcmv1alpha1.CSRSigningControllerConfiguration{ClusterSigningCertFile: "c", ClusterSigningKeyFile: "k"},
			want: []signerFiles{
				{certv1.KubeletServingSignerName, "c", "k"},
				{certv1.KubeAPIServerClientKubeletSignerName, "c", "k"},
				{certv1.KubeAPIServerClientSignerName, "c", "k"},
				{"kubernetes.io/legacy-unknown", "c", "k"},
			}},
		{name: "one specific pair: that signer only", cfg: kcmv1alpha1.CSRSigningControllerConfiguration{KubeletServingSignerConfiguration: pair("sc", "sk")},
			want:    []signerFiles{{certv1.KubeletServingSignerName, "sc", "sk"}},
			skipped: []string{certv1.KubeAPIServerClientKubeletSignerName, certv1.KubeAPIServerClientSignerName, "kubernetes.io/legacy-unknown"}},
		{name: "cluster pair and a specific one", wantErr: true, cfg: kcmv1alpha1.CSRSigningControllerConfiguration{
			ClusterSigningCertFile: "c", ClusterSigningKeyFile: "k", LegacyUnknownSignerConfiguration: pair("lc", "lk")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, skipped, err := selectFiles(tc.cfg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) || !slices.Equal(skipped, tc.skipped) {
				t.Errorf("selectFiles = %v, skipped %v; want %v, %v", got, skipped, tc.want, tc.skipped)
			}
		})
	}
}
