package pgstore_test

import "errors"

const childEnv = "PGSTORE_TEST_CHILD"

func runChild(mode string) error { return errors.New(mode) }
