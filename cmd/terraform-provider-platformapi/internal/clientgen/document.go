package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"platformapi/api"
	"platformapi/bunstore"
	"platformapi/resources"
	"platformapi/resources/codehostsim"
	"platformapi/resources/monitoringsim"
	"platformapi/resources/nodeagent"
)

// Document builds the server's own OpenAPI document in-process: the real
// api.Server with every operation it registers, over the real store on a
// database handle that never connects (building the document reads no
// data). It returns the OpenAPI 3.0 form Huma serves at
// /api/v1/openapi-3.0.json, which is what oapi-codegen reads.
func Document() ([]byte, error) {
	srv, err := newServer()
	if err != nil {
		return nil, err
	}
	return srv.API().OpenAPI().Downgrade()
}

// newServer builds the api.Server; every service the store implements is
// the store, the outside world is simulated.
func newServer() (srv *api.Server, err error) {
	st := bunstore.NewStore(bun.NewDB(sql.OpenDB(noConnector{}), pgdialect.New()))
	var svc api.Services
	svc.CodeHost = codehostsim.New()
	svc.Monitoring = monitoringsim.New()
	svc.NodeAgents = nodeagent.NewFleet(st, nodeagent.NewClient(nil), nil)
	if err := fill(&svc, st); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("building api.Server: %v", r)
		}
	}()
	return api.New(api.Config{Pepper: resources.Pepper("clientgen-pepper-0123456789abcdef"),
		CursorKey: []byte("clientgen-cursor-key")}, svc), nil
}

// fill sets every unset member of svc to impl when impl implements its
// interface, so a service added to api.Services and implemented by the
// store needs no change here; a member left unset is an error naming it.
func fill(svc *api.Services, impl any) error {
	v := reflect.ValueOf(svc).Elem()
	iv := reflect.ValueOf(impl)
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.Interface || !f.IsNil() {
			continue
		}
		if !iv.Type().Implements(f.Type()) {
			return fmt.Errorf("api.Services.%s: the store does not implement %s; add it to clientgen",
				v.Type().Field(i).Name, f.Type())
		}
		f.Set(iv)
	}
	return nil
}

// noConnector is a database that is never reached.
type noConnector struct{}

var errNoDatabase = errors.New("clientgen: building the OpenAPI document must not touch the database")

// Connect always fails.
func (noConnector) Connect(context.Context) (driver.Conn, error) { return nil, errNoDatabase }

// Driver is the connector's driver (which fails too).
func (noConnector) Driver() driver.Driver { return noDriver{} }

type noDriver struct{}

// Open always fails.
func (noDriver) Open(string) (driver.Conn, error) { return nil, errNoDatabase }
