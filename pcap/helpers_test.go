package pcap_test

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// parseJSON decodes one JSON object, keeping numbers exact.
func parseJSON(b []byte) map[string]any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		panic("bad JSON from the printer: " + err.Error() + "\n" + string(b))
	}
	return m
}

func jsonNumber(v any) string {
	switch x := v.(type) {
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "1"
		}
		return "0"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}
