module github.com/locktorture/locktorture/bugs/lineproto

go 1.26.0
