//! `ignoreDifferences`: which rules apply to an object, and removing the fields they name
//! (JSON pointers, jq path expressions); `RespectIgnoreDifferences`.
