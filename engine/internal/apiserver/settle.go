package apiserver

// settleLater runs the controllers a CRD create left due in the background, for clients that only watch
// (a request runs them itself when it comes first), as kube-apiserver's controllers run after its answer. In
// js/wasm too: the bridge serves requests concurrently (a watch waits while a create is answered), and the Go
// runtime runs the goroutine when the page's event loop next yields to it.
func (s *Server) settleLater() {
	go func() {
		// A panic of the controllers leaves the CRD as the create stored it (the next CRD write runs them
		// again); unrecovered here, it would end the process.
		defer func() { _ = recover() }()
		s.settleControllers()
	}()
}
