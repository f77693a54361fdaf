package controller

import (
	"errors"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// StatusCode is the code label upstream's sync metrics give a sync's error
// (the root-CA and cluster-trust-bundle publishers'): "200" for none, the
// API status code of a failed request, also when wrapped, else "500".
func StatusCode(err error) string {
	if err == nil {
		return "200"
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Code != 0 {
		return strconv.Itoa(int(status.Status().Code))
	}
	return "500"
}
