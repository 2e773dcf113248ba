package api

import "fmt"

// maxTopicNameLen is Kafka's limit (249, leaving room for partition suffixes).
const maxTopicNameLen = 249

// validateTopicName applies Kafka's Topic.validate rules: 1–249 characters
// of [a-zA-Z0-9._-], and not "." or "..".
func validateTopicName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("topic name is empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic name cannot be %q", name)
	case len(name) > maxTopicNameLen:
		return fmt.Errorf("topic name is longer than %d characters", maxTopicNameLen)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("topic name %q contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}
