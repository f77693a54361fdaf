package serviceaccounttoken

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Queue keys carry the UIDs (and, for Secrets, the referenced
// ServiceAccount) seen in the event, as upstream's do: a deleted object
// cannot be read back from the cache, and a recreated one with the same
// name must not be mistaken for it. They are JSON so that annotation values
// of any content survive the round trip.

type saKey struct {
	Namespace string    `json:"ns"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
}

type secretQueueKey struct {
	Namespace string    `json:"ns"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	SAName    string    `json:"saName"`
	SAUID     types.UID `json:"saUID"`
}

func serviceAccountKey(sa *v1.ServiceAccount) string {
	return encodeKey(saKey{Namespace: sa.Namespace, Name: sa.Name, UID: sa.UID})
}

func secretKey(s *v1.Secret) string {
	return encodeKey(secretQueueKey{
		Namespace: s.Namespace,
		Name:      s.Name,
		UID:       s.UID,
		SAName:    s.Annotations[v1.ServiceAccountNameKey],
		SAUID:     types.UID(s.Annotations[v1.ServiceAccountUIDKey]),
	})
}

func encodeKey(k any) string {
	b, _ := json.Marshal(k) // cannot fail: strings only
	return string(b)
}

func parseServiceAccountKey(key string) (saKey, error) {
	var k saKey
	if err := json.Unmarshal([]byte(key), &k); err != nil || k.Namespace == "" || k.Name == "" || k.UID == "" {
		return saKey{}, fmt.Errorf("invalid serviceaccount key: %q", key)
	}
	return k, nil
}

func parseSecretKey(key string) (secretQueueKey, error) {
	var k secretQueueKey
	if err := json.Unmarshal([]byte(key), &k); err != nil || k.Namespace == "" || k.Name == "" || k.UID == "" || k.SAName == "" {
		return secretQueueKey{}, fmt.Errorf("invalid secret key: %q", key)
	}
	return k, nil
}
