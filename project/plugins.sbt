// Protobuf code generation (protoc is resolved from Maven Central) and the assembled runtime jar.
addSbtPlugin("com.thesamet" % "sbt-protoc" % "1.0.8")
addSbtPlugin("com.eed3si9n" % "sbt-assembly" % "2.3.1")
