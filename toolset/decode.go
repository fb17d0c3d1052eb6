package toolset

import (
	"cmp"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the fast path of [Func]'s decoding: a plan, made once per
// input type, that fills an In straight from the arguments map, with the
// result of json.Unmarshal(json.Marshal(args)), which stays the reference.
// The plan covers structs (json tags and names, embedded structs), strings,
// bools, numbers, pointers, slices, arrays, maps with string keys and empty
// interfaces. A type outside that (a custom UnmarshalJSON or UnmarshalText,
// such as time.Time's; a ",string" tag; a []byte; json.Number...) gets no
// plan, and its tool decodes through JSON as before. Arguments the plan is
// not sure of (a key that matches no field exactly, a Go value no JSON
// decoder makes) and arguments json.Unmarshal would refuse go through JSON
// too, which also writes the error. FuzzDecodeArgs checks the plan against
// the round trip.

// decodeResult is a plan's answer for one value.
type decodeResult uint8

const (
	decoded  decodeResult = iota // the value is filled in as the round trip fills it
	mismatch                     // the round trip fails: the JSON does not fit the type
	// unknown: the plan cannot tell; the value is partly filled in.
	unknown
)

// A decoder fills values of one Go type from decoded JSON.
type decoder struct {
	typ    reflect.Type
	kind   reflect.Kind
	elem   *decoder       // of a pointer, slice, array or map
	fields []decoderField // of a struct
}

// A decoderField is a struct field as encoding/json sees it.
type decoderField struct {
	name  string
	index []int // as reflect.Value.FieldByIndex, through embedded structs
	dec   *decoder
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
)

// newDecoder plans the decoding of t, or returns nil when t has no plan.
func newDecoder(t reflect.Type) *decoder {
	d, ok := planDecoder(t, map[reflect.Type]bool{})
	if !ok {
		return nil
	}
	return d
}

// planDecoder plans t; planning lists the types on the way, to refuse
// recursive types.
func planDecoder(t reflect.Type, planning map[reflect.Type]bool) (*decoder, bool) {
	if planning[t] || t.Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) || t == jsonNumberType {
		return nil, false
	}
	planning[t] = true
	defer delete(planning, t)

	d := &decoder{typ: t, kind: t.Kind()}
	ok := true
	switch d.kind {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	case reflect.Interface:
		ok = t.NumMethod() == 0
	case reflect.Pointer, reflect.Array:
		d.elem, ok = planDecoder(t.Elem(), planning)
	case reflect.Slice:
		// A []byte is base64 in JSON.
		ok = t.Elem().Kind() != reflect.Uint8
		if ok {
			d.elem, ok = planDecoder(t.Elem(), planning)
		}
	case reflect.Map:
		k := t.Key()
		ok = k.Kind() == reflect.String && !reflect.PointerTo(k).Implements(textUnmarshalerType)
		if ok {
			d.elem, ok = planDecoder(t.Elem(), planning)
		}
	case reflect.Struct:
		fields, fieldsOK := jsonFields(t)
		ok = fieldsOK
		for _, f := range fields {
			fd, fieldOK := planDecoder(f.typ, planning)
			ok = ok && fieldOK
			d.fields = append(d.fields, decoderField{name: f.name, index: f.index, dec: fd})
		}
	default: // complex numbers, channels, functions, unsafe pointers
		ok = false
	}
	return d, ok
}

// decode fills the zero value dst, which must be settable, from v.
func (d *decoder) decode(v any, dst reflect.Value) decodeResult {
	if isNull(v) {
		return decoded // null leaves the zero value as it is
	}
	if d.kind == reflect.Pointer {
		p := reflect.New(d.typ.Elem())
		dst.Set(p)
		return d.elem.decode(v, p.Elem())
	}
	switch x := v.(type) {
	case bool:
		switch d.kind {
		case reflect.Bool:
			dst.SetBool(x)
		case reflect.Interface:
			dst.Set(reflect.ValueOf(v))
		default:
			return mismatch
		}
		return decoded
	case string:
		if !utf8.ValidString(x) {
			return unknown // json.Marshal would replace the bad bytes
		}
		switch d.kind {
		case reflect.String:
			dst.SetString(x)
		case reflect.Interface:
			dst.Set(reflect.ValueOf(v))
		default:
			return mismatch
		}
		return decoded
	case float64:
		return d.decodeNumber(x, v, dst)
	case []any:
		return d.decodeArray(x, dst)
	case map[string]any:
		return d.decodeObject(x, dst)
	}
	return unknown // a Go value that JSON decoding does not make
}

// isNull reports whether json.Marshal writes v as null.
func isNull(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case []any:
		return v == nil
	case map[string]any:
		return v == nil
	}
	return false
}

// decodeNumber decodes f, which is v, as json.Unmarshal decodes the text
// json.Marshal writes for it.
func (d *decoder) decodeNumber(f float64, v any, dst reflect.Value) decodeResult {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return mismatch // json.Marshal fails
	}
	switch d.kind {
	case reflect.Float64:
		dst.SetFloat(f) // the text is the shortest that parses back to f
	case reflect.Interface:
		dst.Set(reflect.ValueOf(v))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var n int64
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			n = int64(f) // the text is the integer itself
		} else {
			var err error
			var buf [32]byte
			if n, err = strconv.ParseInt(string(appendJSONFloat(buf[:0], f)), 10, 64); err != nil {
				return mismatch // a fraction or an exponent, or out of range
			}
		}
		if dst.OverflowInt(n) {
			return mismatch
		}
		dst.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var n uint64
		if f == math.Trunc(f) && !math.Signbit(f) && f < 1<<53 {
			n = uint64(f)
		} else {
			var err error
			var buf [32]byte
			if n, err = strconv.ParseUint(string(appendJSONFloat(buf[:0], f)), 10, 64); err != nil {
				return mismatch // also "-0"
			}
		}
		if dst.OverflowUint(n) {
			return mismatch
		}
		dst.SetUint(n)
	case reflect.Float32:
		// The float32 nearest the decimal text, which can differ from the
		// float32 nearest f.
		var buf [32]byte
		n, err := strconv.ParseFloat(string(appendJSONFloat(buf[:0], f)), 32)
		if err != nil || dst.OverflowFloat(n) {
			return mismatch
		}
		dst.SetFloat(n)
	default:
		return mismatch
	}
	return decoded
}

// appendJSONFloat appends f as json.Marshal writes a float64.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func (d *decoder) decodeArray(a []any, dst reflect.Value) decodeResult {
	switch d.kind {
	case reflect.Slice:
		if len(a) == 0 {
			dst.Set(reflect.MakeSlice(d.typ, 0, 0)) // [] is an empty slice, not nil
			return decoded
		}
		dst.Grow(len(a)) // unlike MakeSlice, allocates the elements only
		dst.SetLen(len(a))
		for i, e := range a {
			if r := d.elem.decode(e, dst.Index(i)); r != decoded {
				return r
			}
		}
		return decoded
	case reflect.Array:
		for i, e := range a {
			var r decodeResult
			if i < dst.Len() {
				r = d.elem.decode(e, dst.Index(i))
			} else {
				r = roundTrips(e) // skipped, but marshalled first
			}
			if r != decoded {
				return r
			}
		}
		return decoded
	case reflect.Interface:
		return setAsIs(a, dst)
	}
	return mismatch
}

func (d *decoder) decodeObject(m map[string]any, dst reflect.Value) decodeResult {
	switch d.kind {
	case reflect.Struct:
		found := 0
		for i := range d.fields {
			f := &d.fields[i]
			v, ok := m[f.name]
			if !ok {
				continue
			}
			found++
			if r := f.dec.decode(v, fieldByIndex(dst, f.index)); r != decoded {
				return r
			}
		}
		if found < len(m) {
			// A key that is no field's name: encoding/json ignores it or
			// matches it to a field without regard to case.
			return unknown
		}
		return decoded
	case reflect.Map:
		out := reflect.MakeMapWithSize(d.typ, len(m))
		key := reflect.New(d.typ.Key()).Elem()
		elem := reflect.New(d.typ.Elem()).Elem()
		for k, v := range m {
			if !utf8.ValidString(k) {
				return unknown
			}
			elem.SetZero()
			if r := d.elem.decode(v, elem); r != decoded {
				return r
			}
			key.SetString(k)
			out.SetMapIndex(key, elem)
		}
		dst.Set(out)
		return decoded
	case reflect.Interface:
		return setAsIs(m, dst)
	}
	return mismatch
}

// fieldByIndex is dst.FieldByIndex(index), allocating the embedded structs
// that are pointers on the way, as encoding/json does.
func fieldByIndex(dst reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && dst.Kind() == reflect.Pointer {
			if dst.IsNil() {
				dst.Set(reflect.New(dst.Type().Elem()))
			}
			dst = dst.Elem()
		}
		dst = dst.Field(x)
	}
	return dst
}

// setAsIs stores the array or object v in the empty interface dst as it
// is, when the round trip would make an equal value.
func setAsIs(v any, dst reflect.Value) decodeResult {
	if r := roundTrips(v); r != decoded {
		return r
	}
	dst.Set(reflect.ValueOf(v))
	return decoded
}

// roundTrips reports whether the round trip makes a value equal to v:
// decoded when it does, mismatch when json.Marshal fails on v.
func roundTrips(v any) decodeResult {
	switch v := v.(type) {
	case nil, bool:
		return decoded
	case string:
		if !utf8.ValidString(v) {
			return unknown
		}
		return decoded
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return mismatch
		}
		return decoded
	case []any:
		if v == nil {
			return unknown // comes back as nil
		}
		for _, e := range v {
			if r := roundTrips(e); r != decoded {
				return r
			}
		}
		return decoded
	case map[string]any:
		if v == nil {
			return unknown
		}
		for k, e := range v {
			if !utf8.ValidString(k) {
				return unknown
			}
			if r := roundTrips(e); r != decoded {
				return r
			}
		}
		return decoded
	}
	return unknown
}

// A jsonField is a struct field that encoding/json decodes.
type jsonField struct {
	name   string
	tagged bool // the name comes from the json tag
	index  []int
	typ    reflect.Type
}

// jsonFields returns the fields of struct type t that encoding/json
// decodes, by the rules of its typeFields: json tag names, embedded structs
// and the dominance of shallower and tagged fields. ok is false for a
// struct the plan leaves to encoding/json: a field with the ",string"
// option, or one behind an embedded pointer to an unexported struct type,
// which encoding/json cannot allocate.
func jsonFields(t reflect.Type) (fields []jsonField, ok bool) {
	type embedded struct {
		typ   reflect.Type
		index []int
	}
	next := []embedded{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	ok = true

	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}

		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if slices.Contains(strings.Split(opts, ","), "string") {
					ok = false
				}
				if !isValidTag(name) {
					name = ""
				}
				index := append(slices.Clone(e.index), i)

				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := jsonField{name: name, tagged: name != "", index: index, typ: sf.Type}
					if f.name == "" {
						f.name = sf.Name
					}
					fields = append(fields, f)
					if count[e.typ] > 1 {
						// Twice, so that the dominance rule sees a conflict.
						fields = append(fields, f)
					}
					continue
				}
				// An embedded struct, explored at the next depth.
				if sf.Type.Kind() == reflect.Pointer && !sf.IsExported() {
					ok = false
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, embedded{typ: ft, index: index})
				}
			}
		}
	}

	slices.SortFunc(fields, func(a, b jsonField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return +1
		}
		return slices.Compare(a.index, b.index)
	})
	// Of fields with the same name, the shallowest wins, a tagged one if
	// several are; two equal candidates hide each other.
	var out []jsonField
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		same := fields[i:j]
		if len(same) == 1 || len(same[0].index) != len(same[1].index) || same[0].tagged != same[1].tagged {
			out = append(out, same[0])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	return out, ok
}

// isValidTag is encoding/json's test of a json tag's name.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
			// Backslash and quote chars are reserved, but otherwise any
			// punctuation chars are allowed in a tag name.
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
