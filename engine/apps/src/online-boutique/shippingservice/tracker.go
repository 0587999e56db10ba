package main

import (
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Tracking ids look like "GB-32571-159423810": two carrier letters, the length of the
// address line followed by three random digits, half that length followed by seven
// random digits. Customer support reads the two length fields to spot a mistyped id.
var trackingIDPattern = regexp.MustCompile(`^[A-Z]{2}-\d{4,}-\d{8,}$`)

var (
	rngMu sync.Mutex
	rng   = rand.New(rand.NewSource(time.Now().UnixNano()))
)

// CreateTrackingId generates a tracking id for a parcel sent to the address in salt.
func CreateTrackingId(salt string) string {
	salt = strings.TrimSpace(salt)
	return fmt.Sprintf("%c%c-%d%s-%d%s",
		getRandomLetterCode(),
		getRandomLetterCode(),
		len(salt),
		getRandomNumber(3),
		len(salt)/2,
		getRandomNumber(7),
	)
}

// ValidTrackingId reports whether id has the shape CreateTrackingId produces.
func ValidTrackingId(id string) bool {
	return trackingIDPattern.MatchString(id)
}

// getRandomLetterCode returns an upper-case letter A..Z.
func getRandomLetterCode() uint32 {
	rngMu.Lock()
	defer rngMu.Unlock()
	return 65 + uint32(rng.Intn(26))
}

// getRandomNumber returns a string of digits random digits.
func getRandomNumber(digits int) string {
	rngMu.Lock()
	defer rngMu.Unlock()
	var b strings.Builder
	b.Grow(digits)
	for i := 0; i < digits; i++ {
		b.WriteByte(byte('0' + rng.Intn(10)))
	}
	return b.String()
}

// addressLine is the salt of a tracking id: "street, city, state".
func addressLine(street, city, state string) string {
	return fmt.Sprintf("%s, %s, %s", street, city, state)
}
