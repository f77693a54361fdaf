package csrsigning

import (
	"crypto/x509"
	"fmt"
	"slices"

	certv1 "k8s.io/api/certificates/v1"
)

// keyUsages and extKeyUsages map the API's usages to X.509 as upstream
// does ("signing" is digital signature, "s/mime" email protection).
var keyUsages = map[certv1.KeyUsage]x509.KeyUsage{
	certv1.UsageSigning:           x509.KeyUsageDigitalSignature,
	certv1.UsageDigitalSignature:  x509.KeyUsageDigitalSignature,
	certv1.UsageContentCommitment: x509.KeyUsageContentCommitment,
	certv1.UsageKeyEncipherment:   x509.KeyUsageKeyEncipherment,
	certv1.UsageKeyAgreement:      x509.KeyUsageKeyAgreement,
	certv1.UsageDataEncipherment:  x509.KeyUsageDataEncipherment,
	certv1.UsageCertSign:          x509.KeyUsageCertSign,
	certv1.UsageCRLSign:           x509.KeyUsageCRLSign,
	certv1.UsageEncipherOnly:      x509.KeyUsageEncipherOnly,
	certv1.UsageDecipherOnly:      x509.KeyUsageDecipherOnly,
}

var extKeyUsages = map[certv1.KeyUsage]x509.ExtKeyUsage{
	certv1.UsageAny:             x509.ExtKeyUsageAny,
	certv1.UsageServerAuth:      x509.ExtKeyUsageServerAuth,
	certv1.UsageClientAuth:      x509.ExtKeyUsageClientAuth,
	certv1.UsageCodeSigning:     x509.ExtKeyUsageCodeSigning,
	certv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection,
	certv1.UsageSMIME:           x509.ExtKeyUsageEmailProtection,
	certv1.UsageIPsecEndSystem:  x509.ExtKeyUsageIPSECEndSystem,
	certv1.UsageIPsecTunnel:     x509.ExtKeyUsageIPSECTunnel,
	certv1.UsageIPsecUser:       x509.ExtKeyUsageIPSECUser,
	certv1.UsageTimestamping:    x509.ExtKeyUsageTimeStamping,
	certv1.UsageOCSPSigning:     x509.ExtKeyUsageOCSPSigning,
	certv1.UsageMicrosoftSGC:    x509.ExtKeyUsageMicrosoftServerGatedCrypto,
	certv1.UsageNetscapeSGC:     x509.ExtKeyUsageNetscapeServerGatedCrypto,
}

// x509Usages returns the key usage bits and the extended key usages,
// de-duplicated and in ascending order as upstream writes them.
func x509Usages(usages []certv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	var ku x509.KeyUsage
	var ext []x509.ExtKeyUsage
	var unknown []certv1.KeyUsage
	for _, u := range usages {
		if v, ok := keyUsages[u]; ok {
			ku |= v
		} else if v, ok := extKeyUsages[u]; ok {
			ext = append(ext, v)
		} else {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) > 0 {
		return 0, nil, fmt.Errorf("unrecognized usage values: %q", unknown)
	}
	slices.Sort(ext)
	return ku, slices.Compact(ext), nil
}
