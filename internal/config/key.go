package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrInvalidConfig is wrapped by every error about a bad key or value; the
// API layer maps it to Kafka's INVALID_CONFIG.
var ErrInvalidConfig = errors.New("config: invalid config")

// Unlimited is the Duration for Kafka's Long.MAX_VALUE milliseconds ("never",
// "no limit") and for any value too large to be a Duration.
const Unlimited = time.Duration(math.MaxInt64)

// Kafka's Long.MAX_VALUE, the default of several "never" settings.
const longMax = "9223372036854775807"

// none marks a key whose Kafka default is null.
const none = "\x00null"

// check validates a value that already parsed as the key's type.
type check func(v string) error

// key is one configuration property as Kafka's ConfigDef declares it.
type key struct {
	name  string
	typ   kmsg.ConfigType
	dflt  string        // none: null
	check check         // range or enum beyond the type; may be nil
	unit  time.Duration // for duration fields: what one unit of the value is
	doc   string
	// mode is how Samsa lets the key change at run time (AlterConfigs on a
	// BROKER resource); kafkaMode is Kafka's "Update Mode". They differ
	// only where Samsa keeps a key Kafka reconfigures read-only, which
	// the key's doc says.
	mode, kafkaMode updateMode
}

// updateMode is Kafka's "Update Mode" of a broker config (KIP-226).
type updateMode uint8

const (
	readOnly    updateMode = iota // read-only: server.properties only
	clusterWide                   // dynamic per broker and at the <default> entity
	perBroker                     // dynamic only per broker (/config/brokers/<id>)
)

var modeNames = [...]string{readOnly: "read-only", clusterWide: "cluster-wide", perBroker: "per-broker"}

func (m updateMode) String() string { return modeNames[m] }

// cluster marks a key cluster-wide dynamic, in Kafka and in Samsa.
func (k key) cluster() key { k.mode, k.kafkaMode = clusterWide, clusterWide; return k }

// broker marks a key per-broker dynamic, in Kafka and in Samsa.
func (k key) broker() key { k.mode, k.kafkaMode = perBroker, perBroker; return k }

// kafka records Kafka's update mode for a key Samsa keeps read-only.
func (k key) kafka(m updateMode) key { k.kafkaMode = m; return k }

// describedDoc is the documentation DescribeConfigs gives: the key's, and
// where Samsa keeps read-only a key Kafka updates at run time, a word on it.
func (k key) describedDoc() string {
	if k.mode == k.kafkaMode {
		return k.doc
	}
	return k.doc + " Samsa: read-only (Kafka: " + k.kafkaMode.String() + ")."
}

func (k key) hasDefault() bool { return k.dflt != none }

// in returns k with its value measured in unit (time.Millisecond, time.Hour…).
func (k key) in(unit time.Duration) key { k.unit = unit; return k }

func mk(name string, typ kmsg.ConfigType, dflt string, c check, doc string) key {
	return key{name: name, typ: typ, dflt: dflt, check: c, doc: doc}
}

func tBool(name, dflt, doc string) key {
	return mk(name, kmsg.ConfigTypeBoolean, dflt, nil, doc)
}
func tStr(name, dflt string, c check, doc string) key {
	return mk(name, kmsg.ConfigTypeString, dflt, c, doc)
}
func tList(name, dflt string, c check, doc string) key {
	return mk(name, kmsg.ConfigTypeList, dflt, c, doc)
}
func tInt(name, dflt string, c check, doc string) key {
	return mk(name, kmsg.ConfigTypeInt, dflt, c, doc)
}
func tShort(name, dflt string, c check, doc string) key {
	return mk(name, kmsg.ConfigTypeShort, dflt, c, doc)
}
func tLong(name, dflt string, c check, doc string) key {
	return mk(name, kmsg.ConfigTypeLong, dflt, c, doc)
}
func tDouble(name, dflt string, c check, doc string) key {
	return mk(name, kmsg.ConfigTypeDouble, dflt, c, doc)
}

// ms is a LONG key measured in milliseconds.
func ms(name, dflt string, c check, doc string) key {
	return tLong(name, dflt, c, doc).in(time.Millisecond)
}

// msInt is an INT key measured in milliseconds.
func msInt(name, dflt string, c check, doc string) key {
	return tInt(name, dflt, c, doc).in(time.Millisecond)
}

// invalid is the one error shape for a bad value; it wraps ErrInvalidConfig.
func invalid(name, value, why string) error {
	return &Error{msg: fmt.Sprintf("config: invalid value %q for %s: %s", value, name, why)}
}

// Error is a configuration error; errors.Is(err, ErrInvalidConfig) holds.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return ErrInvalidConfig }

func errorf(format string, args ...any) error {
	return &Error{msg: "config: " + fmt.Sprintf(format, args...)}
}

// normalize trims the value as Kafka's ConfigDef.parseType does (passwords
// excepted) and checks it against the key's type and validator.
func (k key) normalize(raw string) (string, error) {
	v := raw
	if k.typ != kmsg.ConfigTypePassword {
		v = strings.TrimSpace(raw)
	}
	if why := typeError(k.typ, v); why != "" {
		return "", invalid(k.name, raw, why)
	}
	if k.check != nil {
		if err := k.check(v); err != nil {
			return "", invalid(k.name, raw, err.Error())
		}
	}
	return v, nil
}

// typeError says why v is not a value of typ, or "" when it is.
func typeError(typ kmsg.ConfigType, v string) string {
	bits := map[kmsg.ConfigType]int{
		kmsg.ConfigTypeShort: 16, kmsg.ConfigTypeInt: 32, kmsg.ConfigTypeLong: 64,
	}
	switch typ {
	case kmsg.ConfigTypeBoolean:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return "expected true or false"
		}
	case kmsg.ConfigTypeShort, kmsg.ConfigTypeInt, kmsg.ConfigTypeLong:
		if _, err := strconv.ParseInt(v, 10, bits[typ]); err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return "out of range for " + typeName(typ)
			}
			return "not a number"
		}
	case kmsg.ConfigTypeDouble:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "not a number"
		}
	}
	return ""
}

func typeName(typ kmsg.ConfigType) string {
	return strings.ToUpper(typ.String())
}

// atLeast accepts integers (and doubles) >= min, as Kafka's Range.atLeast.
func atLeast(min int64) check {
	return func(v string) error {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || !(n >= float64(min)) {
			return fmt.Errorf("must be at least %d", min)
		}
		return nil
	}
}

// between accepts numbers in [lo, hi], as Kafka's Range.between.
func between(lo, hi float64) check {
	return func(v string) error {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || !(n >= lo && n <= hi) {
			return fmt.Errorf("must be between %v and %v", lo, hi)
		}
		return nil
	}
}

// either accepts v when any of the checks does; the last error is reported.
func either(cs ...check) check {
	return func(v string) error {
		var err error
		for _, c := range cs {
			if err = c(v); err == nil {
				return nil
			}
		}
		return err
	}
}

// oneOf accepts exactly one of the given strings (case-sensitive, as Kafka's
// ValidString).
func oneOf(valid ...string) check {
	return func(v string) error {
		for _, s := range valid {
			if v == s {
				return nil
			}
		}
		return fmt.Errorf("must be one of %s", strings.Join(valid, ", "))
	}
}

// listOf accepts a comma-separated list whose every element is valid.
func listOf(valid ...string) check {
	one := oneOf(valid...)
	return func(v string) error {
		for _, e := range splitList(v) {
			if err := one(e); err != nil {
				return fmt.Errorf("element %q %v", e, err)
			}
		}
		return nil
	}
}

// splitList splits a Kafka LIST or CSV value, trimming and dropping empty
// elements.
func splitList(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// assign stores an already normalized value into the field ptr points at.
// The switch is on the field's Go type, never on key names.
func assign(ptr any, k key, v string) error {
	switch p := ptr.(type) {
	case *bool:
		*p = strings.EqualFold(v, "true")
	case *string:
		*p = v
	case *[]string:
		*p = splitList(v)
	case *float64:
		f, err := strconv.ParseFloat(v, 64)
		*p = f
		return err
	case *int16:
		n, err := strconv.ParseInt(v, 10, 16)
		*p = int16(n)
		return err
	case *int32:
		n, err := strconv.ParseInt(v, 10, 32)
		*p = int32(n)
		return err
	case *int64:
		n, err := strconv.ParseInt(v, 10, 64)
		*p = n
		return err
	case *time.Duration:
		n, err := strconv.ParseInt(v, 10, 64)
		*p = duration(n, k.unit)
		return err
	default:
		return fmt.Errorf("config: %s bound to unsupported field type %T", k.name, ptr)
	}
	return nil
}

// duration converts n units into a Duration, saturating at ±Unlimited.
func duration(n int64, unit time.Duration) time.Duration {
	if unit <= 0 {
		unit = time.Millisecond
	}
	u := int64(unit)
	switch {
	case n > math.MaxInt64/u:
		return Unlimited
	case n < math.MinInt64/u:
		return -Unlimited
	}
	return time.Duration(n * u)
}

// convert re-expresses an integer value measured in from-units in to-units,
// as Kafka derives retention.ms from log.retention.hours. Negative values are
// "no limit" sentinels and become -1; non-numeric values pass through.
func convert(v string, from, to time.Duration) string {
	if from == to || from <= 0 || to <= 0 {
		return v
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return v
	}
	if n < 0 {
		return "-1"
	}
	d := duration(n, from)
	if d == Unlimited {
		return longMax
	}
	return strconv.FormatInt(int64(d/to), 10)
}

// hostPort accepts "" or host:port (an empty host: every address).
func hostPort(v string) error {
	if v == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(v)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return fmt.Errorf("must be host:port (%v)", err)
	}
	return nil
}
