package api

func (s *Server) registerTenants() {}
