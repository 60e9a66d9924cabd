# SYSTEMTAP_TAPSET, stap's name for the default tapset directory (stap's parseok/macros09)
env: PMSTAP_TAPSET_DIR= SYSTEMTAP_TAPSET=qa/translator/listing/stap-tapset
args: -p1 -e 'probe begin { println(@qa_seven) }'
