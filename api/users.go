package api

func (s *Server) registerUsers() {}
