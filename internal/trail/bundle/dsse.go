package bundle

import "strconv"

// Envelope is a DSSE envelope (github.com/secure-systems-lab/dsse,
// envelope.proto) in its JSON form: the payload is base64 in JSON, raw here.
type Envelope struct {
	Payload     []byte        `json:"payload"`
	PayloadType string        `json:"payloadType"`
	Signatures  []EnvelopeSig `json:"signatures"`
}

// EnvelopeSig is one DSSE signature over PAE(payloadType, payload).
type EnvelopeSig struct {
	Sig   []byte `json:"sig"`
	KeyID string `json:"keyid,omitempty"`
}

// PAE is DSSE's pre-authentication encoding, the bytes a signature covers:
// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII
// decimal.
func PAE(payloadType string, payload []byte) []byte {
	out := []byte("DSSEv1 " + strconv.Itoa(len(payloadType)) + " " + payloadType + " " + strconv.Itoa(len(payload)) + " ")
	return append(out, payload...)
}
