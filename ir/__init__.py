"""Graph IR: values, nodes, blocks, graphs; types; operator table; text; verifier; interpreter."""
