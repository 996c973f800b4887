package apiserver

// settleLater does nothing in js/wasm: the engine's next request runs the controllers (settleControllers).
func (s *Server) settleLater() {}
