package schema

// ReadClaimIDsBack makes s read claim ids back by marker even where the server
// guarantees consecutive ids, so that path is tested on MariaDB too.
func ReadClaimIDsBack(s *Store) {
	s.consecutiveOnce.Do(func() {})
	s.consecutive = false
}

// ConsecutiveClaimIDs reports which path InsertClaims takes on s.
func ConsecutiveClaimIDs(s *Store) bool { return s.consecutive }
