//! Tests of the fakes over real HTTP (reqwest), in the lib's one test binary.

mod approval;
mod audit;
mod backend_tools;
mod gateway;
mod render;
mod sandbox;
mod services_down;
mod session;
mod shape_check;
mod shapes;
mod streaming;
mod streaming_faults;
mod support;
mod workspace;
