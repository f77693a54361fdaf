package serviceaccounttoken

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// verify checks token's signature with pub and returns its header and
// claims.
func verify(t *testing.T, token string, pub crypto.PublicKey) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	dec := func(s string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("decoding %q: %v", s, err)
		}
		return b
	}
	for i, out := range []*map[string]any{&header, &claims} {
		if err := json.Unmarshal(dec(parts[i]), out); err != nil {
			t.Fatal(err)
		}
	}
	input := []byte(parts[0] + "." + parts[1])
	sig := dec(parts[2])
	switch k := pub.(type) {
	case *rsa.PublicKey:
		sum := sha256.Sum256(input)
		if err := rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig); err != nil {
			t.Fatalf("RSA signature: %v", err)
		}
	case *ecdsa.PublicKey:
		var digest []byte
		switch header["alg"] {
		case "ES256":
			s := sha256.Sum256(input)
			digest = s[:]
		case "ES384":
			s := sha512.Sum384(input)
			digest = s[:]
		case "ES512":
			s := sha512.Sum512(input)
			digest = s[:]
		}
		n := len(sig) / 2
		if !ecdsa.Verify(k, digest, new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])) {
			t.Fatal("ECDSA signature does not verify")
		}
	}
	return header, claims
}

func TestLegacyToken(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]crypto.Signer{"RS256": rsaKey}
	for alg, curve := range map[string]elliptic.Curve{"ES256": elliptic.P256(), "ES384": elliptic.P384(), "ES512": elliptic.P521()} {
		k, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		keys[alg] = k
	}
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "builder", UID: "uid-1"}}
	for alg, key := range keys {
		t.Run(alg, func(t *testing.T) {
			s, err := NewSigner(key)
			if err != nil {
				t.Fatal(err)
			}
			token, err := s.LegacyToken(sa, "builder-token-x")
			if err != nil {
				t.Fatal(err)
			}
			header, claims := verify(t, token, key.Public())
			kid, err := KeyID(key.Public())
			if err != nil {
				t.Fatal(err)
			}
			wantHeader := map[string]any{"alg": alg, "kid": kid}
			if len(header) != 2 || header["alg"] != alg || header["kid"] != kid {
				t.Errorf("header = %v, want %v", header, wantHeader)
			}
			want := map[string]string{
				"iss":                                    "kubernetes/serviceaccount",
				"sub":                                    "system:serviceaccount:ns:builder",
				"kubernetes.io/serviceaccount/namespace": "ns",
				"kubernetes.io/serviceaccount/secret.name":          "builder-token-x",
				"kubernetes.io/serviceaccount/service-account.name": "builder",
				"kubernetes.io/serviceaccount/service-account.uid":  "uid-1",
			}
			if len(claims) != len(want) {
				t.Errorf("claims = %v, want %v (no exp, iat, aud)", claims, want)
			}
			for k, v := range want {
				if claims[k] != v {
					t.Errorf("claim %s = %v, want %q", k, claims[k], v)
				}
			}
		})
	}
}

func TestKeyIDIsUpstreams(t *testing.T) {
	// The key id is base64url(sha256(PKIX DER)), unpadded: 43 characters.
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	kid, err := KeyID(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(kid) != 43 || strings.ContainsAny(kid, "+/=") {
		t.Errorf("KeyID = %q", kid)
	}
}

func TestNewSignerRejectsOtherKeys(t *testing.T) {
	if _, err := NewSigner("not a key"); err == nil {
		t.Fatal("want an error")
	}
	k, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSigner(k); err == nil {
		t.Fatal("want an error for P-224")
	}
}
