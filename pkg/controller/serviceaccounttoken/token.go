package serviceaccounttoken

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"

	v1 "k8s.io/api/core/v1"
	apiserverserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// LegacyIssuer is the iss claim of legacy ServiceAccount tokens.
const LegacyIssuer = "kubernetes/serviceaccount"

// The private claims of a legacy token, as the kube-apiserver's legacy
// token authenticator reads them.
const (
	ClaimNamespace          = "kubernetes.io/serviceaccount/namespace"
	ClaimSecretName         = "kubernetes.io/serviceaccount/secret.name"
	ClaimServiceAccountName = "kubernetes.io/serviceaccount/service-account.name"
	ClaimServiceAccountUID  = "kubernetes.io/serviceaccount/service-account.uid"
)

// Signer signs legacy ServiceAccount tokens as compact JWS, with RS256 for
// an RSA key and ES256/384/512 for an ECDSA key on P-256/384/521, and a
// key id derived from the public key as upstream derives it.
type Signer struct {
	alg   string
	keyID string
	newH  func() hash.Hash
	sign  func(digest []byte) ([]byte, error)
}

// NewSigner returns a Signer for an *rsa.PrivateKey or *ecdsa.PrivateKey.
func NewSigner(key any) (*Signer, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		kid, err := KeyID(&k.PublicKey)
		if err != nil {
			return nil, err
		}
		return &Signer{alg: "RS256", keyID: kid, newH: sha256.New,
			sign: func(d []byte) ([]byte, error) { return rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d) },
		}, nil
	case *ecdsa.PrivateKey:
		s := &Signer{}
		switch k.Curve {
		case elliptic.P256():
			s.alg, s.newH = "ES256", sha256.New
		case elliptic.P384():
			s.alg, s.newH = "ES384", sha512.New384
		case elliptic.P521():
			s.alg, s.newH = "ES512", sha512.New
		default:
			return nil, fmt.Errorf("unknown private key curve, must be 256, 384, or 521")
		}
		kid, err := KeyID(&k.PublicKey)
		if err != nil {
			return nil, err
		}
		s.keyID = kid
		size := (k.Curve.Params().BitSize + 7) / 8
		s.sign = func(d []byte) ([]byte, error) {
			r, ss, err := ecdsa.Sign(rand.Reader, k, d)
			if err != nil {
				return nil, err
			}
			// JWS wants r and s as fixed-size big-endian integers.
			out := make([]byte, 2*size)
			r.FillBytes(out[:size])
			ss.FillBytes(out[size:])
			return out, nil
		}
		return s, nil
	default:
		return nil, fmt.Errorf("unknown private key type %T, must be *rsa.PrivateKey or *ecdsa.PrivateKey", key)
	}
}

// KeyID is upstream's key id: the unpadded base64url SHA-256 of the
// public key's PKIX DER encoding.
func KeyID(publicKey any) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(publicKey)
	if err != nil {
		return "", fmt.Errorf("failed to serialize public key to DER format: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// LegacyToken returns the legacy token of sa stored in the Secret named
// secretName: iss, sub and the four kubernetes.io/serviceaccount claims,
// no expiry and no audience.
func (s *Signer) LegacyToken(sa *v1.ServiceAccount, secretName string) (string, error) {
	claims := map[string]string{
		"iss":                   LegacyIssuer,
		"sub":                   apiserverserviceaccount.MakeUsername(sa.Namespace, sa.Name),
		ClaimNamespace:          sa.Namespace,
		ClaimSecretName:         secretName,
		ClaimServiceAccountName: sa.Name,
		ClaimServiceAccountUID:  string(sa.UID),
	}
	return s.signJSON(claims)
}

func (s *Signer) signJSON(claims any) (string, error) {
	// encoding/json sorts map keys, as go-jose does: the header is
	// {"alg":…,"kid":…}, like upstream's.
	header, err := json.Marshal(map[string]string{"alg": s.alg, "kid": s.keyID})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signingInput := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	h := s.newH()
	h.Write([]byte(signingInput))
	sig, err := s.sign(h.Sum(nil))
	if err != nil {
		return "", fmt.Errorf("signing token: %w", err)
	}
	return signingInput + "." + enc.EncodeToString(sig), nil
}
