package cluster

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI holds the paths of the cluster's certificates and keys, named and laid
// out as kubeadm does under /etc/kubernetes/pki.
type PKI struct {
	Dir                                       string
	CACert, CAKey                             string
	APIServerCert, APIServerKey               string
	KubeletClientCert, KubeletClientKey       string
	FrontProxyCACert, FrontProxyCAKey         string
	FrontProxyClientCert, FrontProxyClientKey string
	// SAKey signs service-account tokens; SAPub verifies them.
	SAKey, SAPub string
}

func newPKI(dir string) PKI {
	p := func(name string) string { return filepath.Join(dir, name) }
	return PKI{
		Dir:                  dir,
		CACert:               p("ca.crt"),
		CAKey:                p("ca.key"),
		APIServerCert:        p("apiserver.crt"),
		APIServerKey:         p("apiserver.key"),
		KubeletClientCert:    p("apiserver-kubelet-client.crt"),
		KubeletClientKey:     p("apiserver-kubelet-client.key"),
		FrontProxyCACert:     p("front-proxy-ca.crt"),
		FrontProxyCAKey:      p("front-proxy-ca.key"),
		FrontProxyClientCert: p("front-proxy-client.crt"),
		FrontProxyClientKey:  p("front-proxy-client.key"),
		SAKey:                p("sa.key"),
		SAPub:                p("sa.pub"),
	}
}

// Certificate lifetimes, kubeadm's.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 365 * 24 * time.Hour
	rsaKeyBits   = 2048
)

// keyPair is a certificate with its private key.
type keyPair struct {
	cert *x509.Certificate
	key  *rsa.PrivateKey
}

func (k *keyPair) certPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: k.cert.Raw})
}

func (k *keyPair) keyPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k.key)})
}

// write stores the pair as PEM files: the certificate world-readable, the key
// owner-only.
func (k *keyPair) write(certPath, keyPath string) error {
	if err := os.WriteFile(certPath, k.certPEM(), 0o644); err != nil {
		return fmt.Errorf("cluster: write %s: %w", certPath, err)
	}
	if err := os.WriteFile(keyPath, k.keyPEM(), 0o600); err != nil {
		return fmt.Errorf("cluster: write %s: %w", keyPath, err)
	}
	return nil
}

// certSpec describes a certificate to issue.
type certSpec struct {
	commonName   string
	organization []string
	dnsNames     []string
	ips          []net.IP
	usages       []x509.ExtKeyUsage
}

// newCA creates a self-signed CA, like kubeadm's "kubernetes" and
// "front-proxy-ca".
func newCA(commonName string) (*keyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, rsaKeyBits)
	if err != nil {
		return nil, fmt.Errorf("cluster: generate CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: commonName},
		DNSNames:              []string{commonName},
		NotBefore:             now.Add(-time.Hour).UTC(),
		NotAfter:              now.Add(caValidity).UTC(),
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SubjectKeyId:          keyID(&key.PublicKey),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("cluster: create CA %s: %w", commonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("cluster: parse CA %s: %w", commonName, err)
	}
	return &keyPair{cert: cert, key: key}, nil
}

// issue creates a certificate signed by ca.
func (ca *keyPair) issue(spec certSpec) (*keyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, rsaKeyBits)
	if err != nil {
		return nil, fmt.Errorf("cluster: generate key for %s: %w", spec.commonName, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: spec.commonName, Organization: spec.organization},
		DNSNames:              spec.dnsNames,
		IPAddresses:           spec.ips,
		NotBefore:             now.Add(-time.Hour).UTC(),
		NotAfter:              now.Add(leafValidity).UTC(),
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           spec.usages,
		BasicConstraintsValid: true,
		AuthorityKeyId:        ca.cert.SubjectKeyId,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("cluster: sign certificate for %s: %w", spec.commonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("cluster: parse certificate for %s: %w", spec.commonName, err)
	}
	return &keyPair{cert: cert, key: key}, nil
}

// clientCert issues a client certificate for a user and its groups.
func (ca *keyPair) clientCert(user string, groups ...string) (*keyPair, error) {
	return ca.issue(certSpec{
		commonName:   user,
		organization: groups,
		usages:       []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		// crypto/rand does not fail on Linux; a fixed serial would still work.
		return big.NewInt(time.Now().UnixNano())
	}
	return n.Add(n, big.NewInt(1))
}

func keyID(pub crypto.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil
	}
	sum := sha1.Sum(der)
	return sum[:]
}

// authority is what later steps (kubeconfigs) need from the PKI.
type authority struct {
	ca *keyPair
}

// generatePKI writes kubeadm's certificate set into p.Dir and returns the
// cluster CA. advertise is the apiserver's advertise address.
func generatePKI(p PKI, advertise string) (*authority, error) {
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	ca, err := newCA("kubernetes")
	if err != nil {
		return nil, err
	}
	if err := ca.write(p.CACert, p.CAKey); err != nil {
		return nil, err
	}

	apiserver, err := ca.issue(certSpec{
		commonName: "kube-apiserver",
		dnsNames: []string{
			"kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc." + defaultServiceDNSDomain, "localhost",
		},
		ips: []net.IP{
			net.ParseIP(defaultServiceIP), net.ParseIP("127.0.0.1"),
			net.ParseIP(advertise), net.IPv6loopback,
		},
		usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, err
	}
	if err := apiserver.write(p.APIServerCert, p.APIServerKey); err != nil {
		return nil, err
	}

	kubeletClient, err := ca.clientCert("kube-apiserver-kubelet-client", "kubeadm:cluster-admins")
	if err != nil {
		return nil, err
	}
	if err := kubeletClient.write(p.KubeletClientCert, p.KubeletClientKey); err != nil {
		return nil, err
	}

	frontProxyCA, err := newCA("front-proxy-ca")
	if err != nil {
		return nil, err
	}
	if err := frontProxyCA.write(p.FrontProxyCACert, p.FrontProxyCAKey); err != nil {
		return nil, err
	}
	frontProxyClient, err := frontProxyCA.clientCert("front-proxy-client")
	if err != nil {
		return nil, err
	}
	if err := frontProxyClient.write(p.FrontProxyClientCert, p.FrontProxyClientKey); err != nil {
		return nil, err
	}

	if err := writeServiceAccountKeys(p.SAKey, p.SAPub); err != nil {
		return nil, err
	}
	return &authority{ca: ca}, nil
}

// writeServiceAccountKeys writes kubeadm's sa.key (RSA, PKCS#1) and sa.pub
// (PKIX).
func writeServiceAccountKeys(keyPath, pubPath string) error {
	key, err := rsa.GenerateKey(rand.Reader, rsaKeyBits)
	if err != nil {
		return fmt.Errorf("cluster: generate service-account key: %w", err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return fmt.Errorf("cluster: write %s: %w", keyPath, err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("cluster: marshal service-account public key: %w", err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	if err := os.WriteFile(pubPath, pubPEM, 0o644); err != nil {
		return fmt.Errorf("cluster: write %s: %w", pubPath, err)
	}
	return nil
}
