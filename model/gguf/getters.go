package gguf

import "math"

// lookup returns key's value, or an error wrapping ErrNotFound.
func (f *File) lookup(key string) (Value, error) {
	v, ok := f.Value(key)
	if !ok {
		return Value{}, keyError(key, "%w", ErrNotFound)
	}
	return v, nil
}

// typeError describes a value whose type does not fit the getter.
func typeError(key string, v Value, want string) error {
	t := v.Type().String()
	if v.Type() == ArrayType {
		t = "array of " + v.ElemType().String()
	}
	return keyError(key, "type %s, want %s", t, want)
}

// String returns the string value of key.
func (f *File) String(key string) (string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return "", err
	}
	if s, ok := v.AsString(); ok {
		return s, nil
	}
	return "", typeError(key, v, "string")
}

// Uint returns the value of key, which may have any integer type whose value is not
// negative.
func (f *File) Uint(key string) (uint64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	if u, ok := v.AsUint(); ok {
		return u, nil
	}
	if i, ok := v.AsInt(); ok {
		return 0, keyError(key, "value %d is negative", i)
	}
	return 0, typeError(key, v, "an unsigned integer")
}

// Int returns the value of key, which may have any integer type whose value fits int64.
func (f *File) Int(key string) (int64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	if i, ok := v.AsInt(); ok {
		return i, nil
	}
	if u, ok := v.AsUint(); ok && u > math.MaxInt64 {
		return 0, keyError(key, "value %d overflows int64", u)
	}
	return 0, typeError(key, v, "an integer")
}

// Float returns the value of key, which must be a float32 or float64.
func (f *File) Float(key string) (float64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	if x, ok := v.AsFloat(); ok {
		return x, nil
	}
	return 0, typeError(key, v, "float32 or float64")
}

// Bool returns the bool value of key.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.lookup(key)
	if err != nil {
		return false, err
	}
	if b, ok := v.AsBool(); ok {
		return b, nil
	}
	return false, typeError(key, v, "bool")
}

// Strings returns the array-of-string value of key. The slice is shared; do not modify it.
func (f *File) Strings(key string) ([]string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if a, ok := v.AsStrings(); ok {
		return a, nil
	}
	return nil, typeError(key, v, "array of string")
}

// Float32s returns the array-of-float32 value of key (token scores). The slice is shared.
func (f *File) Float32s(key string) ([]float32, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if a, ok := v.AsFloat32s(); ok {
		return a, nil
	}
	return nil, typeError(key, v, "array of float32")
}

// Int32s returns the array-of-int32 value of key (token types). The slice is shared.
func (f *File) Int32s(key string) ([]int32, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if a, ok := v.AsInt32s(); ok {
		return a, nil
	}
	return nil, typeError(key, v, "array of int32")
}
