package csrsigning

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
)

// authority is a parsed CA: one certificate and the private key matching it.
type authority struct {
	rawCert, rawKey []byte
	cert            *x509.Certificate
	key             crypto.Signer
}

// parseAuthority accepts what upstream's CA provider accepts: a key that
// matches the certificate (as the apiserver's dynamic cert/key loader
// checks), exactly one certificate, and a key that can sign.
func parseAuthority(certPEM, keyPEM []byte) (*authority, error) {
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return nil, errors.New("empty certificate or key file")
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, err
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, err
	}
	if len(certs) != 1 {
		return nil, fmt.Errorf("expected 1 certificate, found %d", len(certs))
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("key did not implement crypto.Signer")
	}
	return &authority{rawCert: certPEM, rawKey: keyPEM, cert: certs[0], key: signer}, nil
}

// caSource is a signer's CA, read from its files again at every use so that
// a CA replaced on disk takes effect at the next signature. The files are
// small and signatures rare; no watcher is needed. A replacement that is
// unreadable, does not parse or does not match its key is logged once and
// the last good CA kept, so a half-written rotation never stops signing.
type caSource struct {
	certFile, keyFile string

	mu               sync.Mutex
	good             *authority
	badCert, badKey  []byte // the last rejected content, not logged again
	readFile         func(string) ([]byte, error)
	lastReadErrorMsg string
}

// loadCA reads and checks the files; they must hold a usable CA now.
func loadCA(certFile, keyFile string) (*caSource, error) {
	s := &caSource{certFile: certFile, keyFile: keyFile, readFile: os.ReadFile}
	certPEM, keyPEM, err := s.read()
	if err == nil {
		s.good, err = parseAuthority(certPEM, keyPEM)
	}
	if err != nil {
		return nil, fmt.Errorf("error reading CA cert file %q and key file %q: %w", certFile, keyFile, err)
	}
	return s, nil
}

func (s *caSource) read() (certPEM, keyPEM []byte, err error) {
	if certPEM, err = s.readFile(s.certFile); err != nil {
		return nil, nil, err
	}
	if keyPEM, err = s.readFile(s.keyFile); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// current returns the CA the files hold now, or the last good one when they
// hold none.
func (s *caSource) current(logger klog.Logger) *authority {
	s.mu.Lock()
	defer s.mu.Unlock()
	certPEM, keyPEM, err := s.read()
	if err != nil {
		if msg := err.Error(); msg != s.lastReadErrorMsg {
			s.lastReadErrorMsg = msg
			logger.Error(err, "Cannot read the CA files, signing with the last good CA", "certFile", s.certFile, "keyFile", s.keyFile)
		}
		return s.good
	}
	s.lastReadErrorMsg = ""
	switch {
	case bytes.Equal(certPEM, s.good.rawCert) && bytes.Equal(keyPEM, s.good.rawKey):
		return s.good
	case bytes.Equal(certPEM, s.badCert) && bytes.Equal(keyPEM, s.badKey):
		return s.good
	}
	ca, err := parseAuthority(certPEM, keyPEM)
	if err != nil {
		s.badCert, s.badKey = certPEM, keyPEM
		logger.Error(err, "The CA files changed but do not hold a usable CA, signing with the last good CA", "certFile", s.certFile, "keyFile", s.keyFile)
		return s.good
	}
	logger.V(2).Info("Loaded a new CA", "certFile", s.certFile, "keyFile", s.keyFile, "subject", ca.cert.Subject.String())
	s.good, s.badCert, s.badKey = ca, nil, nil
	return ca
}

// CheckCAFiles reports whether certFile and keyFile hold a CA the signer
// can use (one certificate, a signing key that matches it), for the
// options' validation at startup.
func CheckCAFiles(certFile, keyFile string) error {
	_, err := loadCA(certFile, keyFile)
	return err
}
