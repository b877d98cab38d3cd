"""TensorBoard logdirs: record framing, event decoding, GraphDef, projector config, import."""
