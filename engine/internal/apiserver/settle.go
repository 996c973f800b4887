//go:build !js

package apiserver

// settleLater runs the controllers a CRD create left due in the background, for clients that only watch
// (a request runs them itself when it comes first). In js/wasm the engine answers one request at a time and
// the next one runs them: the goroutine is left out of the browser's build.
func (s *Server) settleLater() {
	go func() {
		// A panic of the controllers leaves the CRD as the create stored it (the next CRD write runs them
		// again); unrecovered here, it would end the process.
		defer func() { _ = recover() }()
		s.settleControllers()
	}()
}
